import { AesCmac, padIso9797M2, xorInto } from './cmac.ts';

/**
 * AN10922 §2.2 AES-128 key diversification: CMAC over `01 || M` always taken as two blocks (32
 * bytes), padded with `80 00 …` and masked with K2 when shorter, masked with K1 when exactly 32.
 * Unlike plain CMAC, a short M still costs two blocks: that is what the application note specifies.
 */
export function diversifyAes128Key(masterKey: Uint8Array, diversificationInput: Uint8Array): Buffer {
  if (masterKey.length !== 16) throw new RangeError('AN10922 AES-128 needs a 16-byte master key');
  if (diversificationInput.length < 1 || diversificationInput.length > 31) {
    throw new RangeError('AN10922 AES-128 diversification input is 1 to 31 bytes');
  }
  const cmac = new AesCmac(masterKey);
  const input = Buffer.concat([Buffer.from([0x01]), diversificationInput]);
  const complete = input.length === 32;
  const prepared = complete ? input : padIso9797M2(input, 32);
  xorInto(prepared, 16, complete ? cmac.k1 : cmac.k2);
  return cmac.cbcMac(prepared);
}

/** AN10922's "system identifier" part of M for Waymark's tags (ASCII, fixed: changing it re-keys every tag). */
export const WAYMARK_SYSTEM_IDENTIFIER = Buffer.from('Waymark', 'ascii');

/**
 * The key `keyNumber` (0..4 on an NTAG 424 DNA) of the tag with this 7-byte UID, diversified
 * from an organization master key: M = UID || key number || "Waymark" (15 bytes). The same
 * master key and UID give the same key on every process; another UID gives an unrelated key.
 */
export function ntag424TagKey(masterKey: Uint8Array, uid: Uint8Array, keyNumber: number): Buffer {
  if (uid.length !== 7) throw new RangeError('an NTAG 424 DNA UID is 7 bytes');
  if (!Number.isInteger(keyNumber) || keyNumber < 0 || keyNumber > 4) throw new RangeError('NTAG 424 DNA key numbers are 0..4');
  return diversifyAes128Key(masterKey, Buffer.concat([uid, Buffer.from([keyNumber]), WAYMARK_SYSTEM_IDENTIFIER]));
}
