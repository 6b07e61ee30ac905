import { AesCmac, decryptPiccData, ntag424FileReadKey, ntag424MetaReadKey, parseSunParams, PiccDecryptor, sdmMacMatches, SUN_PARAM } from '../../../nfc/index.ts';
import type { MasterKeys } from '../../masterKeys.ts';
import type { TapProofCheck, TapProofKind } from '../../registry.ts';

export const NTAG424_KIND = 'ntag424';

/**
 * Derived keys kept per master key and tag, with their ciphers (creating an OpenSSL cipher costs
 * far more than using one, and diversifying a tag key is three of them): a scan then creates no
 * OpenSSL cipher at all (its session MAC runs on @noble/ciphers, nfc/ntag424/sdm.ts). Memory only,
 * never logged or stored. Bounded: past this many tags of one master key its cache starts over.
 */
const MAX_CACHED_TAG_KEYS = 10_000;

/** What one master key version derives: the organization's meta-read key and each tag's file-read key. */
interface DerivedKeys {
  metaRead: PiccDecryptor;
  /** By upper-case UID hex (the tag row's uid). */
  fileRead: Map<string, AesCmac>;
}

/**
 * NTAG 424 DNA SUN: `?picc=<32 hex>&cmac=<16 hex>`. Tries each master key version of the
 * organization, newest first: the meta-read key that decrypts PICCData names the version, whose
 * per-tag key then checks the MAC.
 */
export function ntag424Kind(masterKeys: MasterKeys): TapProofKind {
  // By the key's bytes (hex), so a version whose key was replaced (import) never uses the old
  // key's derivations; the WeakMap finds that entry again without encoding the key on every scan
  // (MasterKeys hands out the same Buffer until it reads the store again).
  const byKeyHex = new Map<string, DerivedKeys>();
  const byKeyBuffer = new WeakMap<Buffer, DerivedKeys>();
  const derivedFrom = (master: Buffer): DerivedKeys => {
    let derived = byKeyBuffer.get(master);
    if (derived) return derived;
    const hex = master.toString('hex');
    derived = byKeyHex.get(hex);
    if (!derived) byKeyHex.set(hex, (derived = { metaRead: new PiccDecryptor(ntag424MetaReadKey(master)), fileRead: new Map() }));
    byKeyBuffer.set(master, derived);
    return derived;
  };
  const fileReadKey = (master: Buffer, derived: DerivedKeys, uid: Buffer, uidHex: string): AesCmac => {
    let key = derived.fileRead.get(uidHex);
    if (!key) {
      if (derived.fileRead.size >= MAX_CACHED_TAG_KEYS) derived.fileRead.clear();
      derived.fileRead.set(uidHex, (key = new AesCmac(ntag424FileReadKey(master, uid))));
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
        const derived = derivedFrom(key);
        const picc = decryptPiccData(derived.metaRead, sun.picc);
        if (!picc) continue;
        const uid = picc.uid.toString('hex').toUpperCase();
        if (sdmMacMatches(fileReadKey(key, derived, picc.uid, uid), picc, sun.cmac)) return { ok: true, uid, counter: picc.readCounter, keyVersion: version };
        badMac ??= { ok: false, reason: 'bad_mac', uid, counter: picc.readCounter };
      }
      return badMac ?? { ok: false, reason: 'undecryptable' };
    },
  };
}
