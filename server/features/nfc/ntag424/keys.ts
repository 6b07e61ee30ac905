import { diversifyAes128Key, ntag424TagKey, WAYMARK_SYSTEM_IDENTIFIER } from './diversify.ts';

/**
 * Which of the tag's five application keys does what on a Waymark-personalised NTAG 424 DNA.
 * The SDM meta-read key decrypts PICCData before the UID is known, so it cannot depend on the
 * UID: it is diversified from the master key without one (one per organization and key version).
 * Every other key is diversified per tag (UID + key number).
 */
export const NTAG424_KEY = {
  /** AppMasterKey: changes keys and file settings. */
  appMaster: 0,
  /** SDMMetaReadKey: encrypts PICCData (UID + SDMReadCtr). Shared by the organization's tags. */
  sdmMetaRead: 1,
  /** SDMFileReadKey: the SUN MAC's key (via the session key). Per tag. */
  sdmFileRead: 2,
} as const;

export interface Ntag424KeySet {
  /** Keys 0..4 in order, 16 bytes each, as written with ChangeKey. */
  keys: Buffer[];
}

/** The organization-wide SDM meta-read key: M = FF || "Waymark" (FF is no key number, so it never equals a tag key). */
export function ntag424MetaReadKey(masterKey: Uint8Array): Buffer {
  return diversifyAes128Key(masterKey, Buffer.concat([Buffer.from([0xff]), WAYMARK_SYSTEM_IDENTIFIER]));
}

/** The SDM file-read (MAC) key of one tag. */
export function ntag424FileReadKey(masterKey: Uint8Array, uid: Uint8Array): Buffer {
  return ntag424TagKey(masterKey, uid, NTAG424_KEY.sdmFileRead);
}

/** All five keys the personalisation writes onto the tag with this UID. */
export function ntag424KeySet(masterKey: Uint8Array, uid: Uint8Array): Ntag424KeySet {
  const keys = [0, 1, 2, 3, 4].map((n) =>
    n === NTAG424_KEY.sdmMetaRead ? ntag424MetaReadKey(masterKey) : ntag424TagKey(masterKey, uid, n),
  );
  return { keys };
}
