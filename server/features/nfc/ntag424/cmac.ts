import { createCipheriv } from 'node:crypto';

/**
 * AES-128 CMAC (NIST SP 800-38B, RFC 4493) on node:crypto's AES (OpenSSL: AES-NI, constant time).
 * Written here rather than taken from npm: the maintained package (@stablelib/cmac) runs on a
 * table-based pure-JS AES, and the others are single-release 0.0.x; the algorithm is 30 lines.
 */

const BLOCK = 16;
const ZERO_BLOCK = Buffer.alloc(BLOCK);
/** The SP 800-38B constant R_128 (x^128 + x^7 + x^2 + x + 1): 0x87 in the last byte. */
const R128 = 0x87;

/** One AES-128 block encryption (ECB of exactly 16 bytes). */
export function aesEncryptBlock(key: Uint8Array, block: Uint8Array): Buffer {
  const cipher = createCipheriv('aes-128-ecb', key, null);
  cipher.setAutoPadding(false);
  return Buffer.concat([cipher.update(block), cipher.final()]);
}

function doubleInGf128(block: Buffer): Buffer {
  const out = Buffer.alloc(BLOCK);
  for (let i = 0; i < BLOCK; i++) {
    out[i] = ((block[i]! << 1) | (i + 1 < BLOCK ? block[i + 1]! >>> 7 : 0)) & 0xff;
  }
  if (block[0]! & 0x80) out[BLOCK - 1]! ^= R128;
  return out;
}

/** The subkeys K1 and K2 of SP 800-38B §6.1. */
export function cmacSubkeys(key: Uint8Array): { k1: Buffer; k2: Buffer } {
  const l = aesEncryptBlock(key, ZERO_BLOCK);
  const k1 = doubleInGf128(l);
  return { k1, k2: doubleInGf128(k1) };
}

/** CBC-MAC with a zero IV over whole blocks: the last cipher block. */
function cbcMac(key: Uint8Array, blocks: Buffer): Buffer {
  const cipher = createCipheriv('aes-128-cbc', key, ZERO_BLOCK);
  cipher.setAutoPadding(false);
  const out = Buffer.concat([cipher.update(blocks), cipher.final()]);
  return out.subarray(out.length - BLOCK);
}

/** `key` is 16 bytes; the answer is the full 16-byte tag (truncate at the caller). */
export function aesCmac(key: Uint8Array, message: Uint8Array): Buffer {
  if (key.length !== BLOCK) throw new RangeError('AES-128 CMAC needs a 16-byte key');
  const { k1, k2 } = cmacSubkeys(key);
  const complete = message.length > 0 && message.length % BLOCK === 0;
  const padded = complete ? Buffer.from(message) : padIso9797M2(message, Math.ceil((message.length + 1) / BLOCK) * BLOCK);
  xorInto(padded, padded.length - BLOCK, complete ? k1 : k2);
  return cbcMac(key, padded);
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

/** CBC-MAC finishing step shared with AN10922, which pads to a fixed length instead. */
export function cmacOfPrepared(key: Uint8Array, prepared: Buffer): Buffer {
  return cbcMac(key, prepared);
}
