import { cmac as nobleCmac } from '@noble/ciphers/aes.js';
import { describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import {
  aesCmac,
  aesEncryptBlock,
  checkSunMessage,
  cmacSubkeys,
  computeSdmMac,
  decryptPiccData,
  diversifyAes128Key,
  emptyMessageCmac,
  encryptPiccData,
  ntag424KeySet,
  parseSunParams,
  AesBlock,
  sdmSessionMacKey,
  SunQueries,
  sunQueryFor,
} from './index.ts';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const ZERO_KEY = hex('00000000000000000000000000000000');

describe('AES-128 CMAC (NIST SP 800-38B, Appendix D.1 / RFC 4493 §4)', () => {
  const key = hex('2b7e151628aed2a6abf7158809cf4f3c');
  const message = hex(
    '6bc1bee22e409f96e93d7e117393172a ae2d8a571e03ac9c9eb76fac45af8e51 30c81c46a35ce411e5fbc1191a0a52ef f69f2445df4f9b17ad2b417be66c3710',
  );

  it('derives the subkeys K1 and K2', () => {
    const { k1, k2 } = cmacSubkeys(key);
    expect(k1.toString('hex')).toBe('fbeed618357133667c85e08f7236a8de');
    expect(k2.toString('hex')).toBe('f7ddac306ae266ccf90bc11ee46d513b');
  });

  it.each([
    [0, 'bb1d6929e95937287fa37d129b756746'],
    [16, '070a16b46b4d4144f79bdd9dd04a287c'],
    [40, 'dfa66747de9ae63030ca32611497c827'],
    [64, '51f0bebf7e3b9d92fc49741779363cfe'],
  ])('Mlen = %i bytes', (length, expected) => {
    expect(aesCmac(key, message.subarray(0, length)).toString('hex')).toBe(expected);
  });
});

describe('AES-CMAC of one-use session keys (@noble/ciphers)', () => {
  it('gives the same tags as the node:crypto AesCmac for random keys and lengths (whose AES passes FIPS-197 C.1)', () => {
    expect(aesEncryptBlock(hex('000102030405060708090a0b0c0d0e0f'), hex('00112233445566778899aabbccddeeff')).toString('hex')).toBe('69c4e0d86a7b0430d8cdb78070b4c55a');
    for (let i = 0; i < 200; i++) {
      const key = randomBytes(16);
      const message = randomBytes(i % 40);
      expect(Buffer.from(nobleCmac(message, key))).toEqual(aesCmac(key, message));
    }
  });

  it('emptyMessageCmac (the SDMMAC of an empty MAC input) is the CMAC of no bytes: RFC 4493 example 1, random keys, and the key is left as it was', () => {
    expect(Buffer.from(emptyMessageCmac(hex('2b7e151628aed2a6abf7158809cf4f3c'))).toString('hex')).toBe('bb1d6929e95937287fa37d129b756746');
    for (let i = 0; i < 200; i++) {
      const key = randomBytes(16);
      const copy = Buffer.from(key);
      expect(Buffer.from(emptyMessageCmac(key))).toEqual(aesCmac(key, new Uint8Array(0)));
      expect(key).toEqual(copy);
    }
    // A key at an odd offset of a larger buffer (the session key comes from an OpenSSL Buffer).
    const shifted = Buffer.alloc(17);
    randomBytes(16).copy(shifted, 1);
    expect(Buffer.from(emptyMessageCmac(shifted.subarray(1)))).toEqual(aesCmac(shifted.subarray(1), new Uint8Array(0)));
  });
});

describe('AN10922 §2.2 AES-128 key diversification', () => {
  it('reproduces the application note example (UID 04782E21801D80, AID 3042F5, system id "NXP Abu")', () => {
    const masterKey = hex('00112233445566778899AABBCCDDEEFF');
    const m = hex('04782E21801D80 3042F5 4E585020416275');
    expect(diversifyAes128Key(masterKey, m).toString('hex').toUpperCase()).toBe('A8DD63A3B89D54B37CA802473FDA9175');
  });

  it('gives each tag and each key number its own key, and the same on every call', () => {
    const master = hex('000102030405060708090a0b0c0d0e0f');
    const a = ntag424KeySet(master, hex('04DE5F1EACC040')).keys;
    const b = ntag424KeySet(master, hex('04958CAA5C5E80')).keys;
    expect(new Set(a.map((k) => k.toString('hex'))).size).toBe(5);
    expect(a[1]).toEqual(b[1]); // the meta-read key is the organization's, not the tag's
    for (const n of [0, 2, 3, 4]) expect(a[n]).not.toEqual(b[n]);
    expect(ntag424KeySet(master, hex('04DE5F1EACC040')).keys).toEqual(a);
  });
});

describe('SDM / SUN (AN12196)', () => {
  it('§3.4.2.2 (p. 12): decrypts PICCData, derives the session MAC key and the SDMMAC', () => {
    const picc = decryptPiccData(ZERO_KEY, hex('EF963FF7828658A599F3041510671E88'));
    expect(picc).not.toBeNull();
    expect(picc!.uid.toString('hex').toUpperCase()).toBe('04DE5F1EACC040');
    expect(picc!.readCounter).toBe(61);
    expect(sdmSessionMacKey(ZERO_KEY, picc!).toString('hex').toUpperCase()).toBe('3FB5F6E3A807A03D5E3570ACE393776F');
    expect(computeSdmMac(ZERO_KEY, picc!).toString('hex').toUpperCase()).toBe('94EED9EE65337086');
  });

  it('p. 18: the SDMMAC over mirrored text (MAC input = ASCII between the input and MAC offsets)', () => {
    const picc = decryptPiccData(ZERO_KEY, hex('FD91EC264309878BE6345CBE53BADF40'));
    expect(picc!.uid.toString('hex').toUpperCase()).toBe('04958CAA5C5E80');
    expect(picc!.readCounter).toBe(8);
    const macInput = Buffer.from('CEE9A53E3E463EF1F459635736738962&cmac=', 'ascii');
    expect(computeSdmMac(ZERO_KEY, picc!, macInput).toString('hex').toUpperCase()).toBe('ECC1E7F6C6C73BF6');
  });

  it('plain mirror example: UID 041E3C8A2D6B80, counter 6 → 4B00064004B0B3D3', () => {
    const mac = computeSdmMac(ZERO_KEY, { uid: hex('041E3C8A2D6B80'), readCounter: 6 });
    expect(mac.toString('hex').toUpperCase()).toBe('4B00064004B0B3D3');
  });

  it('refuses a wrong meta-read key (noise without the C7 tag) and round-trips its own encryption', () => {
    expect(decryptPiccData(hex('00000000000000000000000000000001'), hex('EF963FF7828658A599F3041510671E88'))).toBeNull();
    const picc = { uid: hex('04A1B2C3D4E5F6'), readCounter: 0xfffffe };
    expect(decryptPiccData(ZERO_KEY, encryptPiccData(ZERO_KEY, picc))).toEqual(picc);
  });

  it('checkSunMessage: accepts what a tag keyed from the master key writes, refuses tampering and other keys', () => {
    const master = hex('8f3c2a1b0d9e7f6a5b4c3d2e1f0a9b8c');
    const picc = { uid: hex('04112233445566'), readCounter: 5 };
    const q = sunQueryFor(master, picc);
    const sun = parseSunParams(q.picc, q.cmac)!;
    expect(checkSunMessage(master, sun)).toEqual({ ok: true, uid: picc.uid, readCounter: 5 });

    const flipped = Buffer.from(sun.cmac);
    flipped[0]! ^= 1;
    expect(checkSunMessage(master, { picc: sun.picc, cmac: flipped })).toMatchObject({ ok: false, reason: 'bad_mac' });
    expect(checkSunMessage(hex('00000000000000000000000000000000'), sun)).toMatchObject({ ok: false });
    expect(parseSunParams(q.picc.slice(1), q.cmac)).toBeNull();
    expect(parseSunParams(q.picc, `${q.cmac.slice(0, 15)}G`)).toBeNull();
  });

  it('SunQueries (cached keys) writes what sunQueryFor writes: same PICCData for the same padding, same MAC', () => {
    const master = hex('8f3c2a1b0d9e7f6a5b4c3d2e1f0a9b8c');
    const taps = new SunQueries(master);
    for (const [uid, readCounter] of [['04112233445566', 1], ['04112233445566', 2], ['04AABBCCDDEEFF', 0xffffff]] as const) {
      const picc = { uid: hex(uid), readCounter };
      const q = taps.for(picc);
      expect(q.cmac).toBe(sunQueryFor(master, picc).cmac);
      expect(checkSunMessage(master, parseSunParams(q.picc, q.cmac)!)).toEqual({ ok: true, uid: picc.uid, readCounter });
    }
    const picc = { uid: hex('04A1B2C3D4E5F6'), readCounter: 7 };
    const padding = hex('0102030405');
    expect(encryptPiccData(new AesBlock(ZERO_KEY), picc, padding)).toEqual(encryptPiccData(ZERO_KEY, picc, padding));
  });
});
