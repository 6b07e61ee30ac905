/**
 * AES-128 block encryption in plain TypeScript (FIPS-197), for keys used for two blocks and then
 * dropped: the SDM session MAC key is new on every tap, and creating an OpenSSL cipher for it cost
 * ~10× the rest of a scan's check (measured 2026-11-26). Byte-wise S-box lookups are not constant
 * time; that is acceptable here only because such a key MACs one counter value that the URL
 * already carries a MAC for (docs/nfc.md). Long-lived keys stay on node:crypto (cmac.ts).
 */

const SBOX = new Uint8Array(256);
(() => {
  // The S-box from GF(2^8) inverses and the affine map, computed once (no 256-entry literal to mistype).
  let p = 1;
  let q = 1;
  do {
    p = p ^ ((p << 1) & 0xff) ^ (p & 0x80 ? 0x1b : 0);
    q ^= q << 1;
    q ^= q << 2;
    q ^= q << 4;
    q &= 0xff;
    if (q & 0x80) q ^= 0x09;
    const x = q ^ rotl8(q, 1) ^ rotl8(q, 2) ^ rotl8(q, 3) ^ rotl8(q, 4);
    SBOX[p] = (x ^ 0x63) & 0xff;
  } while (p !== 1);
  SBOX[0] = 0x63;
})();

function rotl8(x: number, shift: number): number {
  return ((x << shift) | (x >>> (8 - shift))) & 0xff;
}

function xtime(x: number): number {
  return ((x << 1) ^ (x & 0x80 ? 0x1b : 0)) & 0xff;
}

export class SoftAes128 {
  private readonly roundKeys = new Uint8Array(176);

  constructor(key: Uint8Array) {
    if (key.length !== 16) throw new RangeError('AES-128 needs a 16-byte key');
    const w = this.roundKeys;
    w.set(key, 0);
    let rcon = 1;
    for (let i = 16; i < 176; i += 4) {
      let t0 = w[i - 4]!;
      let t1 = w[i - 3]!;
      let t2 = w[i - 2]!;
      let t3 = w[i - 1]!;
      if (i % 16 === 0) {
        const first = t0;
        t0 = SBOX[t1]! ^ rcon;
        t1 = SBOX[t2]!;
        t2 = SBOX[t3]!;
        t3 = SBOX[first]!;
        rcon = xtime(rcon);
      }
      w[i] = w[i - 16]! ^ t0;
      w[i + 1] = w[i - 15]! ^ t1;
      w[i + 2] = w[i - 14]! ^ t2;
      w[i + 3] = w[i - 13]! ^ t3;
    }
  }

  encrypt(block: Uint8Array): Buffer {
    const w = this.roundKeys;
    const s = new Uint8Array(16);
    for (let i = 0; i < 16; i++) s[i] = block[i]! ^ w[i]!;
    const t = new Uint8Array(16);
    for (let round = 1; round <= 10; round++) {
      // SubBytes and ShiftRows together: state is column-major, byte (row r, column c) at 4c + r.
      for (let c = 0; c < 4; c++) {
        for (let r = 0; r < 4; r++) t[4 * c + r] = SBOX[s[4 * ((c + r) % 4) + r]!]!;
      }
      if (round < 10) {
        for (let c = 0; c < 4; c++) {
          const a0 = t[4 * c]!;
          const a1 = t[4 * c + 1]!;
          const a2 = t[4 * c + 2]!;
          const a3 = t[4 * c + 3]!;
          const all = a0 ^ a1 ^ a2 ^ a3;
          s[4 * c] = a0 ^ all ^ xtime(a0 ^ a1);
          s[4 * c + 1] = a1 ^ all ^ xtime(a1 ^ a2);
          s[4 * c + 2] = a2 ^ all ^ xtime(a2 ^ a3);
          s[4 * c + 3] = a3 ^ all ^ xtime(a3 ^ a0);
        }
      } else {
        s.set(t);
      }
      const k = round * 16;
      for (let i = 0; i < 16; i++) s[i]! ^= w[k + i]!;
    }
    return Buffer.from(s.buffer, s.byteOffset, 16);
  }
}
