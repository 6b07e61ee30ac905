/**
 * NFC Forum Type 2 tag layout (NTAG213/215/216, MIFARE Ultralight family) and the NDEF-safe
 * write plan. Pure functions: the PC/SC transport lives elsewhere (program.ts takes an APDU
 * function).
 */

export const PAGE_SIZE = 4;
/** The data area (and the NDEF TLV) starts at page 4. */
export const FIRST_DATA_PAGE = 4;

export type AtrClass =
  | { supported: true; kind: 'type2' }
  | { supported: false; kind: 'mifare_classic' | 'storage_card' | 'iso_dep' | 'unknown'; reason: string };

/**
 * Classifies a card by the ATR a PC/SC contactless reader synthesises (PC/SC part 3: RID
 * A0 00 00 03 06, standard byte, two card-name bytes).
 */
export function classifyAtr(atr: Buffer): AtrClass {
  const rid = Buffer.from([0xa0, 0x00, 0x00, 0x03, 0x06]);
  if (atr.length >= 15 && atr[4] === 0x80 && atr[5] === 0x4f && atr.subarray(7, 12).equals(rid)) {
    const name = atr.readUInt16BE(13);
    if (name === 0x0003 || name === 0x003a || name === 0x0000) return { supported: true, kind: 'type2' };
    if (name === 0x0001 || name === 0x0002 || name === 0x0026) {
      return {
        supported: false,
        kind: 'mifare_classic',
        reason: 'Unsupported card: MIFARE Classic is not an NFC Forum Type 2 tag. Use NTAG213/215/216 or Ultralight tags.',
      };
    }
    return {
      supported: false,
      kind: 'storage_card',
      reason: `Unsupported card (PC/SC card name ${name.toString(16).padStart(4, '0')}): only NFC Forum Type 2 tags (NTAG213/215/216, Ultralight) can be written.`,
    };
  }
  if (atr.length >= 2 && atr[0] === 0x3b) {
    return {
      supported: false,
      kind: 'iso_dep',
      reason: 'Unsupported card: an ISO-DEP (ISO 14443-4) card or a phone, not a Type 2 tag. Use NTAG213/215/216 or Ultralight tags.',
    };
  }
  return { supported: false, kind: 'unknown', reason: 'Unsupported card: unrecognised ATR.' };
}

export interface CapabilityContainer {
  magic: number;
  majorVersion: number;
  minorVersion: number;
  /** Data area in bytes (CC byte 2 × 8). */
  dataAreaBytes: number;
  readAccess: number;
  writeAccess: number;
  /** A name for the chip, guessed from the data area size. */
  type: string;
}

export function tagTypeForSize(dataAreaBytes: number): string {
  switch (dataAreaBytes) {
    case 48:
      return 'MIFARE Ultralight';
    case 144:
      return 'NTAG213';
    case 496:
      return 'NTAG215';
    case 872:
      return 'NTAG216';
    default:
      return `Type 2 tag (${dataAreaBytes} bytes)`;
  }
}

/** The NTAG sizes on sale, smallest first. */
export const NTAG_SIZES = [
  { type: 'NTAG213', bytes: 144 },
  { type: 'NTAG215', bytes: 496 },
  { type: 'NTAG216', bytes: 872 },
] as const;

/** The NTAGs with at least `bytes` of data area (a "tag too small" refusal suggests these). */
export function tagsThatFit(bytes: number): Array<(typeof NTAG_SIZES)[number]> {
  return NTAG_SIZES.filter((t) => t.bytes >= bytes);
}

/** Page of the dynamic lock bytes for the NTAG21x sizes, null otherwise. */
export function dynamicLockPage(dataAreaBytes: number): number | null {
  return dataAreaBytes === 144 ? 0x28 : dataAreaBytes === 496 ? 0x82 : dataAreaBytes === 872 ? 0xe2 : null;
}

export function parseCapabilityContainer(page3: Buffer): CapabilityContainer {
  const dataAreaBytes = page3[2]! * 8;
  return {
    magic: page3[0]!,
    majorVersion: page3[1]! >> 4,
    minorVersion: page3[1]! & 0x0f,
    dataAreaBytes,
    readAccess: page3[3]! >> 4,
    writeAccess: page3[3]! & 0x0f,
    type: tagTypeForSize(dataAreaBytes),
  };
}

/** The NDEF Message TLV (type 03, 1- or 3-byte length) followed by the Terminator TLV if it fits. */
export function ndefTlv(message: Buffer, dataAreaBytes: number): Buffer {
  const head =
    message.length < 0xff
      ? Buffer.from([0x03, message.length])
      : Buffer.from([0x03, 0xff, message.length >> 8, message.length & 0xff]);
  const tlv = Buffer.concat([head, message]);
  return tlv.length < dataAreaBytes ? Buffer.concat([tlv, Buffer.from([0xfe])]) : tlv;
}

/** Bytes of data area a message needs (TLV header + message; the terminator is optional). */
export function bytesNeeded(message: Buffer): number {
  return (message.length < 0xff ? 2 : 4) + message.length;
}

export interface PageWrite {
  page: number;
  data: Buffer;
}

/**
 * The order that never leaves a valid-looking half-written message: first the TLV with length 0
 * (an empty NDEF message), then the body pages, then the first page again with the real length.
 * `currentFirstPage` (page 4 as read before writing) lets the first step be skipped when the tag
 * already holds an empty NDEF TLV there.
 */
export function planWrite(tlv: Buffer, currentFirstPage?: Buffer): PageWrite[] {
  const padded = Buffer.alloc(Math.ceil(tlv.length / PAGE_SIZE) * PAGE_SIZE);
  tlv.copy(padded);
  const pages: PageWrite[] = [];
  for (let i = 0; i < padded.length / PAGE_SIZE; i++) {
    pages.push({ page: FIRST_DATA_PAGE + i, data: padded.subarray(i * PAGE_SIZE, (i + 1) * PAGE_SIZE) });
  }
  const first = Buffer.from(pages[0]!.data);
  const emptied = Buffer.from(first);
  // Length 0: the 1-byte form is [03 00 ..]; for the 3-byte form [03 FF hi lo] write [03 00 ..] too.
  emptied[1] = 0x00;
  const alreadyEmpty = currentFirstPage !== undefined && currentFirstPage[0] === 0x03 && currentFirstPage[1] === 0x00;
  const plan: PageWrite[] = [];
  if (!alreadyEmpty) plan.push({ page: FIRST_DATA_PAGE, data: emptied });
  if (first[1] === 0xff) {
    // 3-byte length: bytes 2-3 of page 4 are the length itself; keep them 0 until the end.
    emptied[2] = 0;
    emptied[3] = 0;
  }
  plan.push(...pages.slice(1));
  plan.push({ page: FIRST_DATA_PAGE, data: first });
  return plan;
}

/** Start pages of the 16-byte reads that cover `bytes` of the data area (verification). */
export function verifyReads(bytes: number): number[] {
  const pages = Math.ceil(bytes / PAGE_SIZE);
  const reads: number[] = [];
  for (let p = 0; p < pages; p += 4) reads.push(FIRST_DATA_PAGE + p);
  return reads;
}

/** Are any static lock bits set for the pages a message would occupy (pages 3..15)? */
export function staticLocked(lock0: number, lock1: number, lastPage: number): boolean {
  if ((lock0 & 0x08) !== 0) return true; // CC page locked
  for (let page = FIRST_DATA_PAGE; page <= Math.min(lastPage, 15); page++) {
    if (page <= 7 && (lock0 & (1 << page)) !== 0) return true;
    if (page >= 8 && (lock1 & (1 << (page - 8))) !== 0) return true;
  }
  return false;
}
