/**
 * The card side's own AES-128 arithmetic for the virtual NTAG 424 DNA: CMAC (SP 800-38B), the EV2
 * session keys, secure-messaging IVs, SDM. Written independently of server/features/nfc/ntag424
 * on purpose: the server is tested against a second implementation, not against itself.
 */
import { createCipheriv, createDecipheriv } from 'node:crypto';
import zlib from 'node:zlib';

const ZERO16 = Buffer.alloc(16);

export function ecbEncrypt(key: Buffer, block: Buffer): Buffer {
  const c = createCipheriv('aes-128-ecb', key, null).setAutoPadding(false);
  return Buffer.concat([c.update(block), c.final()]);
}

export function cbcEncrypt(key: Buffer, iv: Buffer, data: Buffer): Buffer {
  const c = createCipheriv('aes-128-cbc', key, iv).setAutoPadding(false);
  return Buffer.concat([c.update(data), c.final()]);
}

export function cbcDecrypt(key: Buffer, iv: Buffer, data: Buffer): Buffer {
  const d = createDecipheriv('aes-128-cbc', key, iv).setAutoPadding(false);
  return Buffer.concat([d.update(data), d.final()]);
}

function shiftLeft(b: Buffer): Buffer {
  const out = Buffer.alloc(16);
  let carry = 0;
  for (let i = 15; i >= 0; i--) {
    out[i] = ((b[i]! << 1) | carry) & 0xff;
    carry = b[i]! >> 7;
  }
  if (b[0]! & 0x80) out[15]! ^= 0x87;
  return out;
}

export function cmac(key: Buffer, message: Buffer): Buffer {
  const k1 = shiftLeft(ecbEncrypt(key, ZERO16));
  const k2 = shiftLeft(k1);
  const whole = message.length > 0 && message.length % 16 === 0;
  const last = whole ? Buffer.from(message) : Buffer.concat([message, Buffer.from([0x80]), Buffer.alloc(15 - (message.length % 16))]);
  const mask = whole ? k1 : k2;
  for (let i = 0; i < 16; i++) last[last.length - 16 + i]! ^= mask[i]!;
  const enc = cbcEncrypt(key, ZERO16, last);
  return enc.subarray(enc.length - 16);
}

/** The 8 bytes NXP sends: the CMAC's odd-indexed bytes (S1, S3 … S15). */
export function truncate(mac: Buffer): Buffer {
  return Buffer.from([1, 3, 5, 7, 9, 11, 13, 15].map((i) => mac[i]!));
}

/** ISO/IEC 9797-1 padding method 2: always 80, then zeros to the block. */
export function pad(data: Buffer): Buffer {
  const n = 16 - (data.length % 16);
  return Buffer.concat([data, Buffer.from([0x80]), Buffer.alloc(n - 1)]);
}

export function unpad(data: Buffer): Buffer | null {
  let end = data.length - 1;
  while (end >= 0 && data[end] === 0x00) end--;
  return end >= 0 && data[end] === 0x80 ? data.subarray(0, end) : null;
}

/** EV2 session vectors (datasheet §9.1.7): SV1 (A5 5A, encryption) and SV2 (5A A5, MAC). */
export function ev2SessionKeys(key: Buffer, rndA: Buffer, rndB: Buffer): { enc: Buffer; mac: Buffer } {
  const xored = Buffer.alloc(6);
  for (let i = 0; i < 6; i++) xored[i] = rndA[2 + i]! ^ rndB[i]!;
  const tail = Buffer.concat([rndA.subarray(0, 2), xored, rndB.subarray(6, 16), rndA.subarray(8, 16)]);
  const sv1 = Buffer.concat([Buffer.from([0xa5, 0x5a, 0x00, 0x01, 0x00, 0x80]), tail]);
  const sv2 = Buffer.concat([Buffer.from([0x5a, 0xa5, 0x00, 0x01, 0x00, 0x80]), tail]);
  return { enc: cmac(key, sv1), mac: cmac(key, sv2) };
}

/** IV of a FULL-mode command (A5 5A) or response (5A A5). */
export function ev2Iv(encKey: Buffer, label: 'command' | 'response', ti: Buffer, cmdCtr: number): Buffer {
  const head = label === 'command' ? [0xa5, 0x5a] : [0x5a, 0xa5];
  const ctr = Buffer.alloc(2);
  ctr.writeUInt16LE(cmdCtr);
  return ecbEncrypt(encKey, Buffer.concat([Buffer.from(head), ti, ctr, Buffer.alloc(8)]));
}

export function rotateLeft(b: Buffer): Buffer {
  return Buffer.concat([b.subarray(1), b.subarray(0, 1)]);
}

/** NXP's CRC32 (ChangeKey): IEEE 802.3 polynomial, initial FFFFFFFF, no final inversion, little-endian. */
export function crc32nk(data: Buffer): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32LE(~zlib.crc32(data) >>> 0);
  return out;
}

/** SDM session MAC key: CMAC(K_SDMFileRead, 3C C3 00 01 00 80 || UID || SDMReadCtr). */
export function sdmMacKey(fileReadKey: Buffer, uid: Buffer, readCtr: number): Buffer {
  const ctr = Buffer.alloc(3);
  ctr.writeUIntLE(readCtr, 0, 3);
  return cmac(fileReadKey, Buffer.concat([Buffer.from([0x3c, 0xc3, 0x00, 0x01, 0x00, 0x80]), uid, ctr]));
}
