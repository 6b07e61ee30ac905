import { AesCmac, decryptPiccData, ntag424FileReadKey, ntag424MetaReadKey, parseSunParams, PiccDecryptor, sdmMacMatches, SUN_PARAM } from '../../../nfc/index.ts';
import type { MasterKeys } from '../../masterKeys.ts';
import type { TapProofCheck, TapProofKind } from '../../registry.ts';

export const NTAG424_KIND = 'ntag424';

/**
 * Derived keys kept per master key and tag, with their ciphers (creating an OpenSSL cipher costs
 * far more than using one): a scan then creates one cipher, for its session key.
 */
const MAX_CACHED_TAG_KEYS = 10_000;

/**
 * NTAG 424 DNA SUN: `?picc=<32 hex>&cmac=<16 hex>`. Tries each master key version of the
 * organization, newest first: the meta-read key that decrypts PICCData names the version, whose
 * per-tag key then checks the MAC.
 */
export function ntag424Kind(masterKeys: MasterKeys): TapProofKind {
  const metaReadKeys = new Map<string, PiccDecryptor>();
  const fileReadKeys = new Map<string, AesCmac>();
  const metaReadKey = (master: Buffer): PiccDecryptor => {
    const name = master.toString('hex');
    let key = metaReadKeys.get(name);
    if (!key) metaReadKeys.set(name, (key = new PiccDecryptor(ntag424MetaReadKey(master))));
    return key;
  };
  const fileReadKey = (master: Buffer, uid: Buffer): AesCmac => {
    const name = `${master.toString('hex')}:${uid.toString('hex')}`;
    let key = fileReadKeys.get(name);
    if (!key) {
      if (fileReadKeys.size >= MAX_CACHED_TAG_KEYS) fileReadKeys.clear();
      fileReadKeys.set(name, (key = new AesCmac(ntag424FileReadKey(master, uid))));
    }
    return key;
  };
  return {
    kind: NTAG424_KIND,
    present: (query) => query.has(SUN_PARAM.picc) || query.has(SUN_PARAM.cmac),
    check(orgId, query): TapProofCheck {
      const sun = parseSunParams(query.get(SUN_PARAM.picc), query.get(SUN_PARAM.cmac));
      if (!sun) return { ok: false, reason: 'malformed' };
      const versions = masterKeys.versions(NTAG424_KIND, orgId);
      if (versions.length === 0) return { ok: false, reason: 'no_key' };
      let badMac: TapProofCheck | null = null;
      for (const { version, key } of versions) {
        const picc = decryptPiccData(metaReadKey(key), sun.picc);
        if (!picc) continue;
        const uid = picc.uid.toString('hex').toUpperCase();
        if (sdmMacMatches(fileReadKey(key, picc.uid), picc, sun.cmac)) return { ok: true, uid, counter: picc.readCounter, keyVersion: version };
        badMac ??= { ok: false, reason: 'bad_mac', uid, counter: picc.readCounter };
      }
      return badMac ?? { ok: false, reason: 'undecryptable' };
    },
  };
}
