/**
 * NTAG213/215/216 configuration (datasheet NTAG213/215/216 §8.5 and §8.8-8.11): the UID and NFC
 * counter ASCII mirror, the NFC counter, and the 32-bit password (PWD, PACK, AUTH0, PROT).
 * Pure functions; program.ts sends the commands.
 */
import { FIRST_DATA_PAGE, PAGE_SIZE } from './type2.ts';

/** What the tag mirrors `UIDxCOUNTER` over: 14 hex digits of UID, `x`, 6 hex digits of counter. */
export const MIRROR_PLACEHOLDER = '00000000000000x000000';
/** The scan URL's query parameter that carries the mirror. */
export const MIRROR_PARAM = 'm';

/** First configuration page (CFG0) of an NTAG21x by its data area size; null for other tags. */
export function configPageFor(dataAreaBytes: number): number | null {
  return dataAreaBytes === 144 ? 0x29 : dataAreaBytes === 496 ? 0x83 : dataAreaBytes === 872 ? 0xe3 : null;
}

/** The tag URL with the mirror placeholder as its last query parameter. */
export function mirrorUrl(tagUrl: string): string {
  return `${tagUrl}${tagUrl.includes('?') ? '&' : '?'}${MIRROR_PARAM}=${MIRROR_PLACEHOLDER}`;
}

/** The same URL with whatever the tag mirrored put back to the placeholder (what was written). */
export function unmirrored(url: string): string {
  return url.replace(new RegExp(`([?&]${MIRROR_PARAM}=)[0-9A-F]{14}x[0-9A-F]{6}$`), `$1${MIRROR_PLACEHOLDER}`);
}

export interface MirrorReading {
  /** As stored in `hardware_id`: `04:A2:…`. */
  uid: string;
  counter: number;
}

/** Parses a mirrored `UIDxCOUNTER` value; null when it is not one (e.g. the unmirrored placeholder). */
export function parseMirror(value: string): MirrorReading | null {
  const m = /^([0-9A-F]{14})x([0-9A-F]{6})$/.exec(value);
  if (!m || value === MIRROR_PLACEHOLDER) return null;
  return { uid: m[1]!.match(/../g)!.join(':'), counter: parseInt(m[2]!, 16) };
}

/** Where the placeholder sits in tag memory, for MIRROR_PAGE and MIRROR_BYTE; null when absent. */
export function mirrorPosition(tlv: Buffer): { page: number; byte: number; offset: number } | null {
  const offset = tlv.lastIndexOf(Buffer.from(MIRROR_PLACEHOLDER, 'latin1'));
  if (offset < 0) return null;
  const absolute = FIRST_DATA_PAGE * PAGE_SIZE + offset;
  return { page: Math.floor(absolute / PAGE_SIZE), byte: absolute % PAGE_SIZE, offset };
}

export interface Ntag21xConfig {
  /** MIRROR_CONF: 0 none, 1 UID, 2 counter, 3 UID and counter. */
  mirrorConf: number;
  mirrorPage: number;
  mirrorByte: number;
  /** First page that needs PWD_AUTH (FF: none in practice). */
  auth0: number;
  /** PROT: reads need the password too. */
  readProtected: boolean;
  counterEnabled: boolean;
}

/** Parses CFG0 and CFG1 (the first 8 bytes of a READ at CFG0). */
export function parseConfig(bytes: Buffer): Ntag21xConfig {
  return {
    mirrorConf: bytes[0]! >> 6,
    mirrorByte: (bytes[0]! >> 4) & 0x03,
    mirrorPage: bytes[2]!,
    auth0: bytes[3]!,
    readProtected: (bytes[4]! & 0x80) !== 0,
    counterEnabled: (bytes[4]! & 0x10) !== 0,
  };
}

/** Is any page of the tag (up to its configuration) behind the password? */
export function isPasswordProtected(config: Ntag21xConfig, cfgPage: number): boolean {
  return config.auth0 <= cfgPage + 3;
}

/**
 * AUTH0 when protecting: from page 2 on (lock bytes, CC, user memory, configuration), so nobody
 * without the password can rewrite, lock or reconfigure the tag. PROT stays 0: phones still read.
 */
export const PROTECT_FROM_PAGE = 0x02;

export interface TagPassword {
  pwd: Buffer;
  pack: Buffer;
}

/**
 * CFG0 and CFG1 for the wanted state. MIRROR keeps STRG_MOD_EN (bit 2) set as shipped; ACCESS sets
 * NFC_CNT_EN with the mirror, AUTHLIM 0 (a limit would let anyone brick the tag with wrong tries).
 */
export function configBytes(want: { mirror: { page: number; byte: number } | null; protect: boolean }): { cfg0: Buffer; cfg1: Buffer } {
  const mirror = want.mirror ? 0xc0 | (want.mirror.byte << 4) | 0x04 : 0x04;
  return {
    cfg0: Buffer.from([mirror, 0x00, want.mirror?.page ?? 0x00, want.protect ? PROTECT_FROM_PAGE : 0xff]),
    cfg1: Buffer.from([want.mirror ? 0x10 : 0x00, 0x05, 0x00, 0x00]),
  };
}
