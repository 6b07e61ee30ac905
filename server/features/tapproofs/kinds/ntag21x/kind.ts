import { MIRROR_PARAM, parseMirror } from '../../../nfc/index.ts';
import type { TapProofCheck, TapProofKind } from '../../registry.ts';

export const NTAG21X_KIND = 'ntag21x';

/**
 * NTAG213/215/216 UID + NFC counter ASCII mirror: `?nfc&m=<14 hex UID>x<6 hex counter>`. Evidence,
 * not proof: the mirror is plain text that anyone who read the tag once can copy and edit, so a
 * consistent mirror (registered UID for this node, counter above the last one) leaves the scan
 * `nfc_unverified`; an inconsistent one (another UID, a counter seen before) is a failure like a
 * bad proof. No key: the check is the registration and the counter (docs/nfc.md).
 */
export function ntag21xKind(): TapProofKind {
  return {
    kind: NTAG21X_KIND,
    proves: false,
    present: (query) => query.has(MIRROR_PARAM),
    check(_orgId, query): TapProofCheck {
      const mirror = parseMirror(query.get(MIRROR_PARAM) ?? '');
      if (!mirror) return { ok: false, reason: 'malformed' };
      return { ok: true, uid: mirror.uid.replaceAll(':', ''), counter: mirror.counter, keyVersion: 0 };
    },
  };
}
