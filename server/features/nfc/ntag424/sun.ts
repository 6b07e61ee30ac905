import { computeSdmMac, decryptPiccData, encryptPiccData, sdmMacMatches, type PiccData } from './sdm.ts';
import { AesBlock, AesCmac } from './cmac.ts';
import { ntag424FileReadKey, ntag424MetaReadKey } from './keys.ts';

/**
 * Waymark's SUN URL parameters: `?picc=<32 hex>&cmac=<16 hex>` after the scan URL. The tag
 * mirrors upper-case hex; either case is read.
 */
export const SUN_PARAM = { picc: 'picc', cmac: 'cmac' } as const;
/** The NDEF URL suffix the personalisation writes, with the placeholders SDM overwrites. */
export const SUN_URL_TEMPLATE_SUFFIX = `?${SUN_PARAM.picc}=${'0'.repeat(32)}&${SUN_PARAM.cmac}=${'0'.repeat(16)}`;

const HEX32 = /^[0-9a-fA-F]{32}$/;
const HEX16 = /^[0-9a-fA-F]{16}$/;

export interface SunParams {
  picc: Buffer;
  cmac: Buffer;
}

/** Null unless both parameters are present and well-formed hex of the right length. */
export function parseSunParams(picc: string | null | undefined, cmac: string | null | undefined): SunParams | null {
  if (!picc || !cmac || !HEX32.test(picc) || !HEX16.test(cmac)) return null;
  return { picc: Buffer.from(picc, 'hex'), cmac: Buffer.from(cmac, 'hex') };
}

export type SunCheck =
  | { ok: true; uid: Buffer; readCounter: number }
  | { ok: false; reason: 'undecryptable' }
  | { ok: false; reason: 'bad_mac'; uid: Buffer; readCounter: number };

/**
 * Checks a SUN message against an organization master key: decrypt PICCData with the shared
 * meta-read key, then the MAC with the tag's own file-read key. Says nothing about replay: the
 * caller compares readCounter with the last one it accepted for that UID.
 */
export function checkSunMessage(masterKey: Uint8Array, sun: SunParams): SunCheck {
  const picc = decryptPiccData(ntag424MetaReadKey(masterKey), sun.picc);
  if (!picc) return { ok: false, reason: 'undecryptable' };
  if (!sdmMacMatches(ntag424FileReadKey(masterKey, picc.uid), picc, sun.cmac)) {
    return { ok: false, reason: 'bad_mac', uid: picc.uid, readCounter: picc.readCounter };
  }
  return { ok: true, uid: picc.uid, readCounter: picc.readCounter };
}

/** What a tag personalised from `masterKey` mirrors into its URL on the tap that reads `picc` (upper-case hex). */
export function sunQueryFor(masterKey: Uint8Array, picc: PiccData): { picc: string; cmac: string } {
  return {
    picc: encryptPiccData(ntag424MetaReadKey(masterKey), picc).toString('hex').toUpperCase(),
    cmac: computeSdmMac(ntag424FileReadKey(masterKey, picc.uid), picc).toString('hex').toUpperCase(),
  };
}

/**
 * sunQueryFor for many taps of many tags (the scan benchmark's load, which must not take the
 * server's CPU): the meta-read cipher and each tag's MAC key are derived once, not per tap.
 */
export class SunQueries {
  private readonly masterKey: Uint8Array;
  private readonly metaRead: AesBlock;
  private readonly fileRead = new Map<string, AesCmac>();
  constructor(masterKey: Uint8Array) {
    this.masterKey = masterKey;
    this.metaRead = new AesBlock(ntag424MetaReadKey(masterKey));
  }
  for(picc: PiccData): { picc: string; cmac: string } {
    const uid = picc.uid.toString('hex');
    let fileRead = this.fileRead.get(uid);
    if (!fileRead) this.fileRead.set(uid, (fileRead = new AesCmac(ntag424FileReadKey(this.masterKey, picc.uid))));
    return {
      picc: encryptPiccData(this.metaRead, picc).toString('hex').toUpperCase(),
      cmac: computeSdmMac(fileRead, picc).toString('hex').toUpperCase(),
    };
  }
}
