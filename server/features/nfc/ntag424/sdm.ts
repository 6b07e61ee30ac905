import { createCipheriv, createDecipheriv, randomBytes, timingSafeEqual, type Decipheriv } from 'node:crypto';
import { AesBlock, AesCmac } from './cmac.ts';
import { cmac, unsafe as nobleAes } from '@noble/ciphers/aes.js';

/**
 * Secure Dynamic Messaging (NT4H2421Gx §9.3, AN12196 §3.3–3.4), AES mode, UID and read counter
 * mirrored encrypted (PICCData) plus a truncated CMAC over the mirrored part of the URL.
 */

const ZERO_IV = Buffer.alloc(16);
/** PICCDataTag of "UID mirrored, SDMReadCtr mirrored, UID length 7": the only layout Waymark writes. */
export const PICC_DATA_TAG_UID_AND_COUNTER = 0xc7;
export const SDM_READ_COUNTER_MAX = 0xffffff;

export interface PiccData {
  /** 7 bytes. */
  uid: Buffer;
  /** SDMReadCtr, 0..0xFFFFFF: the tag adds one on every read of the NDEF file. */
  readCounter: number;
}

/**
 * Decrypts the 16-byte encrypted PICCData with the SDM meta-read key (AES-128-CBC, zero IV).
 * Null when the plaintext does not carry the UID+counter layout: a wrong key or a forged value
 * decrypts to noise, so this check alone refuses most of them before any CMAC is computed.
 */
export function decryptPiccData(metaReadKey: Uint8Array | PiccDecryptor, encrypted: Uint8Array): PiccData | null {
  if (encrypted.length !== 16) return null;
  const decryptor = metaReadKey instanceof PiccDecryptor ? metaReadKey : new PiccDecryptor(metaReadKey);
  const plain = decryptor.decryptBlock(encrypted);
  if (plain[0] !== PICC_DATA_TAG_UID_AND_COUNTER) return null;
  return { uid: Buffer.from(plain.subarray(1, 8)), readCounter: plain.readUIntLE(8, 3) };
}

/**
 * The meta-read key's cipher, made once: PICCData is one block, so CBC with a zero IV is a plain
 * block decryption (ECB, no padding: each update gives its block back at once).
 */
export class PiccDecryptor {
  private readonly decipher: Decipheriv;
  constructor(metaReadKey: Uint8Array) {
    this.decipher = createDecipheriv('aes-128-ecb', metaReadKey, null);
    this.decipher.setAutoPadding(false);
  }
  decryptBlock(block: Uint8Array): Buffer {
    return this.decipher.update(block);
  }
}

/**
 * The tag's side of decryptPiccData (tests, the virtual tag, the benchmark's load): the last 5
 * bytes are random. An AesBlock under the meta-read key (one block: CBC with a zero IV is ECB)
 * spares a caller that encrypts many the cipher creation per call.
 */
export function encryptPiccData(metaReadKey: Uint8Array | AesBlock, picc: PiccData, padding: Uint8Array = randomBytes(5)): Buffer {
  checkPicc(picc);
  const plain = Buffer.alloc(16);
  plain[0] = PICC_DATA_TAG_UID_AND_COUNTER;
  picc.uid.copy(plain, 1);
  plain.writeUIntLE(picc.readCounter, 8, 3);
  Buffer.from(padding).copy(plain, 11, 0, 5);
  if (metaReadKey instanceof AesBlock) return metaReadKey.encrypt(plain);
  const cipher = createCipheriv('aes-128-cbc', metaReadKey, ZERO_IV);
  cipher.setAutoPadding(false);
  return Buffer.concat([cipher.update(plain), cipher.final()]);
}

/**
 * KSesSDMFileReadMAC = CMAC(SDMFileReadKey, SV2), SV2 = 3C C3 00 01 00 80 || UID || SDMReadCtr
 * (little-endian): a fresh MAC key for every tap, so a MAC never repeats across counters.
 */
export function sdmSessionMacKey(fileReadKey: Uint8Array | AesCmac, picc: PiccData): Buffer {
  checkPicc(picc);
  const sv2 = Buffer.alloc(16);
  sv2.set([0x3c, 0xc3, 0x00, 0x01, 0x00, 0x80], 0);
  picc.uid.copy(sv2, 6);
  sv2.writeUIntLE(picc.readCounter, 13, 3);
  return (fileReadKey instanceof AesCmac ? fileReadKey : new AesCmac(fileReadKey)).mac(sv2);
}

/** MACt: the 8 odd-numbered bytes (1, 3, …, 15) of the 16-byte CMAC, as the tag truncates it. */
export function truncateMac(fullMac: Uint8Array): Buffer {
  const out = Buffer.alloc(8);
  for (let i = 0; i < 8; i++) out[i] = fullMac[2 * i + 1]!;
  return out;
}

/**
 * The SDMMAC the tag writes for this tap. `macInput` is the URL text between SDMMACInputOffset
 * and SDMMACOffset (ASCII); Waymark's tags set both offsets equal, so it is empty.
 */
export function computeSdmMac(fileReadKey: Uint8Array | AesCmac, picc: PiccData, macInput: Uint8Array = Buffer.alloc(0)): Buffer {
  const sessionKey = sdmSessionMacKey(fileReadKey, picc);
  // A key used once, for two blocks: creating an OpenSSL cipher for it costs ~100x a block
  // (105 us against 1.3 us measured under load), so it runs on @noble/ciphers' audited AES.
  return truncateMac(macInput.length === 0 ? emptyMessageCmac(sessionKey) : cmac(macInput, sessionKey));
}

/**
 * AES-CMAC of the empty message (what Waymark's tags MAC: SDMMACInputOffset = SDMMACOffset), on
 * @noble/ciphers' AES block primitives: SP 800-38B with no message block is
 * T = AES_K(K2 xor 80 00 … 00), K2 = dbl(dbl(AES_K(0))). The same tag as its streaming CMAC
 * (crypto.test.ts), without that object's buffers, checks and wiping: on the scan path, where
 * this runs once per verified tap, that was a third of the check's time.
 */
export function emptyMessageCmac(key: Uint8Array): Uint8Array {
  const roundKeys = nobleAes.expandKeyLE(key);
  const block = new Uint8Array(16);
  nobleAes.encryptBlock(roundKeys, block);
  nobleAes.dbl(block);
  nobleAes.dbl(block);
  block[0]! ^= 0x80;
  nobleAes.encryptBlock(roundKeys, block);
  roundKeys.fill(0);
  return block;
}

/** Constant-time comparison of a received SDMMAC with the expected one. */
export function sdmMacMatches(fileReadKey: Uint8Array | AesCmac, picc: PiccData, receivedMac: Uint8Array, macInput?: Uint8Array): boolean {
  if (receivedMac.length !== 8) return false;
  return timingSafeEqual(computeSdmMac(fileReadKey, picc, macInput), receivedMac);
}

function checkPicc(picc: PiccData): void {
  if (picc.uid.length !== 7) throw new RangeError('SDM PICCData carries a 7-byte UID');
  if (!Number.isInteger(picc.readCounter) || picc.readCounter < 0 || picc.readCounter > SDM_READ_COUNTER_MAX) {
    throw new RangeError('SDMReadCtr is a 24-bit counter');
  }
}
