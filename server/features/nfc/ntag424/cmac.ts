import { createCipheriv, type Cipheriv } from 'node:crypto';

/**
 * AES-128 CMAC (NIST SP 800-38B, RFC 4493) on node:crypto's AES (OpenSSL: AES-NI, constant time).
 * Written here rather than taken from npm: the maintained package (@stablelib/cmac) runs on a
 * table-based pure-JS AES, and the others are single-release 0.0.x; the algorithm is 30 lines.
 *
 * Creating an OpenSSL cipher costs far more than encrypting a block with it (OpenSSL 3 fetches
 * the algorithm each time), so a key's cipher is made once (AesBlock) and a CMAC keeps its key's
 * cipher and subkeys (AesCmac): a scan's check then creates one cipher, for the session key.
 */

const BLOCK = 16;
const ZERO_BLOCK = Buffer.alloc(BLOCK);
/** The SP 800-38B constant R_128 (x^128 + x^7 + x^2 + x + 1): 0x87 in the last byte. */
const R128 = 0x87;

/** AES-128 encryption of single blocks under one key (ECB, no padding: each update is one block out). */
export class AesBlock {
  private readonly cipher: Cipheriv;
  constructor(key: Uint8Array) {
    if (key.length !== BLOCK) throw new RangeError('AES-128 needs a 16-byte key');
    this.cipher = createCipheriv('aes-128-ecb', key, null);
    this.cipher.setAutoPadding(false);
  }
  encrypt(block: Uint8Array): Buffer {
    return this.cipher.update(block);
  }
}

/** One AES-128 block encryption (ECB of exactly 16 bytes). */
export function aesEncryptBlock(key: Uint8Array, block: Uint8Array): Buffer {
  return new AesBlock(key).encrypt(block);
}

function doubleInGf128(block: Buffer): Buffer {
  const out = Buffer.alloc(BLOCK);
  for (let i = 0; i < BLOCK; i++) {
    out[i] = ((block[i]! << 1) | (i + 1 < BLOCK ? block[i + 1]! >>> 7 : 0)) & 0xff;
  }
  if (block[0]! & 0x80) out[BLOCK - 1]! ^= R128;
  return out;
}

/** AES-128 CMAC under one key, its cipher and subkeys kept for every message. */
/** What a CMAC needs of AES: one block at a time under its key. */
export interface BlockCipher {
  encrypt(block: Uint8Array): Buffer;
}

export class AesCmac {
  private readonly aes: BlockCipher;
  /** The subkeys K1 and K2 of SP 800-38B §6.1. */
  readonly k1: Buffer;
  readonly k2: Buffer;

  /** `cipher`: AES under `key`; node:crypto's unless the caller brings one (any BlockCipher). */
  constructor(key: Uint8Array, cipher: BlockCipher = new AesBlock(key)) {
    this.aes = cipher;
    this.k1 = doubleInGf128(this.aes.encrypt(ZERO_BLOCK));
    this.k2 = doubleInGf128(this.k1);
  }

  /** The full 16-byte tag (truncate at the caller). */
  mac(message: Uint8Array): Buffer {
    const complete = message.length > 0 && message.length % BLOCK === 0;
    const padded = complete ? Buffer.from(message) : padIso9797M2(message, Math.ceil((message.length + 1) / BLOCK) * BLOCK);
    xorInto(padded, padded.length - BLOCK, complete ? this.k1 : this.k2);
    return this.cbcMac(padded);
  }

  /** CBC-MAC with a zero IV over whole blocks already prepared (padded and masked): the last block. */
  cbcMac(blocks: Buffer): Buffer {
    let x: Buffer = ZERO_BLOCK;
    for (let offset = 0; offset < blocks.length; offset += BLOCK) {
      const m = Buffer.from(blocks.subarray(offset, offset + BLOCK));
      xorInto(m, 0, x);
      x = this.aes.encrypt(m);
    }
    return x;
  }
}

/** The subkeys K1 and K2 of SP 800-38B §6.1. */
export function cmacSubkeys(key: Uint8Array): { k1: Buffer; k2: Buffer } {
  const { k1, k2 } = new AesCmac(key);
  return { k1, k2 };
}

/** `key` is 16 bytes; the answer is the full 16-byte tag (truncate at the caller). */
export function aesCmac(key: Uint8Array, message: Uint8Array): Buffer {
  return new AesCmac(key).mac(message);
}

/** `message || 80 00 … 00` up to `length` bytes (SP 800-38B padding, ISO/IEC 9797-1 method 2). */
export function padIso9797M2(message: Uint8Array, length: number): Buffer {
  const out = Buffer.alloc(length);
  out.set(message, 0);
  out[message.length] = 0x80;
  return out;
}

export function xorInto(target: Buffer, offset: number, mask: Uint8Array): void {
  for (let i = 0; i < mask.length; i++) target[offset + i]! ^= mask[i]!;
}
