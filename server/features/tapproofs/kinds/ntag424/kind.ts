import { checkSunMessage, parseSunParams, SUN_PARAM } from '../../../nfc/index.ts';
import type { MasterKeys } from '../../masterKeys.ts';
import type { TapProofCheck, TapProofKind } from '../../registry.ts';

export const NTAG424_KIND = 'ntag424';

/**
 * NTAG 424 DNA SUN: `?picc=<32 hex>&cmac=<16 hex>`. Tries each master key version of the
 * organization, newest first: the meta-read key that decrypts PICCData names the version, whose
 * per-tag key then checks the MAC.
 */
export function ntag424Kind(masterKeys: MasterKeys): TapProofKind {
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
        const result = checkSunMessage(key, sun);
        const uid = result.ok || result.reason === 'bad_mac' ? result.uid.toString('hex').toUpperCase() : undefined;
        if (result.ok) return { ok: true, uid: uid!, counter: result.readCounter, keyVersion: version };
        if (result.reason === 'bad_mac') badMac ??= { ok: false, reason: 'bad_mac', uid: uid!, counter: result.readCounter };
      }
      return badMac ?? { ok: false, reason: 'undecryptable' };
    },
  };
}
