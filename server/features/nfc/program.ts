/**
 * Reading and writing a Type 2 tag through any APDU transport (PC/SC pseudo-APDUs FF CA / FF B0 /
 * FF D6, as PC/SC part 3 defines for contactless storage cards). No PC/SC library here: the
 * bridge child passes nfc-pcsc's transmit, tests can pass a fake.
 */
import { decodeUriMessage, encodeUriMessage } from './ndef.ts';
import { contentOf, inspectNtag424, type Ntag424State, NTAG424_TYPE } from './ntag424-program.ts';
import {
  bytesNeeded,
  classifyAtr,
  dynamicLockPage,
  FIRST_DATA_PAGE,
  ndefTlv,
  parseCapabilityContainer,
  planWrite,
  staticLocked,
  tagsThatFit,
  verifyReads,
  type CapabilityContainer,
} from './type2.ts';

export type Transmit = (apdu: Buffer, maxResponseLength: number) => Promise<Buffer>;

export const NFC_ERROR_CODES = [
  'unavailable', // nfc-pcsc not installed / cannot load
  'no_daemon', // pcscd not running
  'no_reader',
  'no_tag',
  'unsupported_card',
  'not_formatted',
  'too_small',
  'read_only',
  'tag_removed',
  'verify_failed',
  'lock_failed',
  'uid_bound',
  'already_written', // the tag is bound to another node and holds its URL: a finished tag
  'duplicate_url', // the tag holds the URL of a node bound to another tag
  'wrong_key', // an NTAG 424 DNA keyed by someone else (or with another master key)
  'no_master_key', // an NTAG 424 DNA, and no organization master key to key it with
  'busy',
  'io_error',
] as const;
export type NfcErrorCode = (typeof NFC_ERROR_CODES)[number];

export class NfcError extends Error {
  readonly code: NfcErrorCode;
  constructor(code: NfcErrorCode, message: string) {
    super(message);
    this.name = 'NfcError';
    this.code = code;
  }
}

export const messages = {
  tagRemoved: 'Tag removed during the write: present it to the reader again to retry.',
  readOnly: 'This tag is read-only or locked and cannot be written. Use a new tag.',
  notFormatted: 'This tag has no NDEF capability container (not NFC Forum formatted). Use an NDEF-formatted Type 2 tag.',
  tooSmall: (need: number, have: number, type: string) => {
    const bigger = tagsThatFit(Math.max(need, have + 1));
    const use = bigger.length > 0 ? `Use a bigger tag: ${bigger.map((t) => `${t.type} (${t.bytes} bytes)`).join(' or ')}.` : 'No NTAG holds it: use a shorter scan base.';
    const presented = type.startsWith('Type 2 tag') ? 'tag' : type;
    return `Tag too small: the URL needs ${need} bytes, this ${presented} holds ${have}. ${use}`;
  },
  verifyFailed: 'Read-back did not match what was written. Present the tag again to retry, or use another tag.',
  lockFailed:
    'The tag did not take the lock: its lock bytes read back unset. The URL is written and verified but the tag is still writable. Present it again to retry, or use another tag.',
};

/** UID as stored in `hardware_id`: upper-case hex bytes separated by colons. */
export function formatUid(uid: Buffer): string {
  return [...uid].map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join(':');
}

export interface TagInfo {
  uid: string;
  atr: string;
  supported: boolean;
  /** Why the card cannot be written (unsupported, unformatted, read-only …). */
  refusal?: { code: NfcErrorCode; message: string };
  type?: string;
  dataAreaBytes?: number;
  readOnly?: boolean;
  /** What the tag holds, read at inspection (formatted tags only). */
  content?: TagContent;
  /** For an NTAG 424 DNA: SDM (secure unique messages) already on, and key 0's version then. */
  ntag424?: { sdm: boolean; keyVersion: number | null };
}

/** A tag's NDEF content: nothing (blank), a URI record, or something else. */
export type TagContent = { kind: 'blank' } | { kind: 'uri'; url: string } | { kind: 'other' };

/** What the tag's first pages looked like at inspection; reused by the write to save an APDU. */
export interface TagSnapshot {
  info: TagInfo;
  cc?: CapabilityContainer;
  lock0: number;
  lock1: number;
  /** Page 4 as last known (before our writes). */
  firstDataPage?: Buffer;
  /** APDUs the inspection cost, counted once in the first write on this presentation. */
  inspectApdus?: number;
  /** An NTAG 424 DNA's file settings, NDEF file and key version as inspected. */
  ntag424?: Ntag424State;
}

export interface ApduCounter {
  apdus: number;
}

/** One APDU, counted; a transport error or a reply without a status word means the tag has gone. */
export async function send(tx: Transmit, apdu: Buffer, max: number, counter: ApduCounter): Promise<Buffer> {
  counter.apdus++;
  let response: Buffer;
  try {
    response = await tx(apdu, max);
  } catch {
    throw new NfcError('tag_removed', messages.tagRemoved);
  }
  // vpcd (and some readers) answer with no status word when the card has gone.
  if (response.length < 2) throw new NfcError('tag_removed', messages.tagRemoved);
  return response;
}

function ok(response: Buffer): boolean {
  return response.length >= 2 && response[response.length - 2] === 0x90 && response[response.length - 1] === 0x00;
}

export async function readUid(tx: Transmit, counter: ApduCounter): Promise<Buffer> {
  const r = await send(tx, Buffer.from([0xff, 0xca, 0x00, 0x00, 0x00]), 12, counter);
  if (!ok(r)) throw new NfcError('io_error', 'The reader could not read the tag UID.');
  return r.subarray(0, -2);
}

export async function readPages(tx: Transmit, page: number, counter: ApduCounter): Promise<Buffer> {
  const r = await send(tx, Buffer.from([0xff, 0xb0, 0x00, page, 0x10]), 18, counter);
  if (!ok(r) || r.length !== 18) throw new NfcError('io_error', `Could not read page ${page} of the tag.`);
  return r.subarray(0, 16);
}

async function writePage(tx: Transmit, page: number, data: Buffer, counter: ApduCounter): Promise<void> {
  const r = await send(tx, Buffer.concat([Buffer.from([0xff, 0xd6, 0x00, page, 0x04]), data]), 2, counter);
  if (!ok(r)) throw new NfcError('read_only', messages.readOnly);
}

/** UID, type, capacity and writability: GET UID + one 16-byte read of pages 2..5. */
export async function inspectTag(tx: Transmit, atr: Buffer, counter: ApduCounter = { apdus: 0 }): Promise<TagSnapshot> {
  const uid = await readUid(tx, counter);
  const info: TagInfo = { uid: formatUid(uid), atr: atr.toString('hex').toUpperCase(), supported: false };
  const cls = classifyAtr(atr);
  if (!cls.supported && cls.kind === 'iso_dep') {
    const dna = await inspectNtag424(tx, counter);
    if (dna) {
      info.type = NTAG424_TYPE;
      info.dataAreaBytes = dna.settings.size - 2;
      info.supported = true;
      info.readOnly = false;
      info.content = contentOf(dna.file);
      info.ntag424 = { sdm: dna.settings.sdm !== null, keyVersion: dna.keyVersion0 };
      return { info, lock0: 0, lock1: 0, ntag424: dna, inspectApdus: counter.apdus };
    }
  }
  if (!cls.supported) {
    info.refusal = { code: 'unsupported_card', message: cls.reason };
    return { info, lock0: 0, lock1: 0 };
  }
  const head = await readPages(tx, 2, counter);
  const lock0 = head[2]!;
  const lock1 = head[3]!;
  const cc = parseCapabilityContainer(head.subarray(4, 8));
  if (cc.magic !== 0xe1 || cc.majorVersion !== 1 || cc.dataAreaBytes === 0) {
    info.refusal = { code: 'not_formatted', message: messages.notFormatted };
    return { info, lock0, lock1 };
  }
  info.type = cc.type;
  info.dataAreaBytes = cc.dataAreaBytes;
  info.readOnly = cc.writeAccess !== 0 || staticLocked(lock0, lock1, 15);
  if (info.readOnly) info.refusal = { code: 'read_only', message: messages.readOnly };
  else info.supported = true;
  try {
    info.content = await readContent(tx, head.subarray(8, 16), cc.dataAreaBytes, counter);
  } catch (err) {
    if (err instanceof NfcError && err.code === 'tag_removed') throw err;
    info.content = { kind: 'other' }; // unreadable content does not stop a write
  }
  return { info, cc, lock0, lock1, firstDataPage: Buffer.from(head.subarray(8, 12)), inspectApdus: counter.apdus };
}

/**
 * The NDEF message the tag holds, from the data area's first 8 bytes (already read) and as many
 * further 16-byte reads as its TLV needs: none for a blank or factory-empty tag.
 */
async function readContent(tx: Transmit, first8: Buffer, dataAreaBytes: number, counter: ApduCounter): Promise<TagContent> {
  let data = Buffer.from(first8);
  const ensure = async (bytes: number) => {
    while (data.length < Math.min(bytes, dataAreaBytes)) {
      data = Buffer.concat([data, await readPages(tx, FIRST_DATA_PAGE + data.length / 4, counter)]);
    }
    return data.length >= bytes;
  };
  let at = 0;
  while (at < dataAreaBytes) {
    if (!(await ensure(at + 4))) return { kind: 'other' };
    const t = data[at]!;
    if (t === 0x00) {
      at++;
      continue;
    }
    if (t === 0xfe) return { kind: 'blank' };
    let len = data[at + 1]!;
    let head = 2;
    if (len === 0xff) {
      len = data.readUInt16BE(at + 2);
      head = 4;
    }
    if (t === 0x03) {
      if (len === 0) return { kind: 'blank' };
      if (!(await ensure(at + head + len))) return { kind: 'other' };
      const url = decodeUriMessage(data.subarray(at + head, at + head + len));
      return url === null ? { kind: 'other' } : { kind: 'uri', url };
    }
    at += head + len; // lock / memory control TLVs
  }
  return { kind: 'blank' };
}

export interface WriteOutcome {
  uid: string;
  type: string;
  url: string;
  /** APDUs sent for the write, verification and lock (not the inspection). */
  apdus: number;
  /** APDUs of the presentation's inspection not yet reported by an earlier write (else 0). */
  inspectApdus: number;
  pagesWritten: number;
  locked: boolean;
  /** NTAG 424 DNA only: already personalised for this URL with these keys (verified, nothing written). */
  recognised?: boolean;
  /** NTAG 424 DNA only: the key version written, and the SDMReadCtr the verify read mirrored. */
  keyVersion?: number;
  readCounter?: number;
}

/**
 * Writes `url` as an NDEF URI message in the NDEF-safe page order, reads it back (one 16-byte
 * read per 4 pages) and compares, then optionally locks the tag permanently.
 */
export async function writeUriToTag(
  tx: Transmit,
  snapshot: TagSnapshot,
  url: string,
  options: { lock?: boolean } = {},
): Promise<WriteOutcome> {
  const { info, cc } = snapshot;
  if (info.refusal) throw new NfcError(info.refusal.code, info.refusal.message);
  if (!cc) throw new NfcError('not_formatted', messages.notFormatted);
  const message = encodeUriMessage(url);
  const need = bytesNeeded(message);
  if (need > cc.dataAreaBytes) throw new NfcError('too_small', messages.tooSmall(need, cc.dataAreaBytes, cc.type));
  const tlv = ndefTlv(message, cc.dataAreaBytes);
  const plan = planWrite(tlv, snapshot.firstDataPage);
  const counter: ApduCounter = { apdus: 0 };
  for (const w of plan) await writePage(tx, w.page, w.data, counter);
  snapshot.firstDataPage = Buffer.from(tlv.subarray(0, 4));
  await verifyTlv(tx, tlv, counter);
  info.content = { kind: 'uri', url };

  if (options.lock) {
    // Dynamic lock bytes first, then the CC (read-only access), then the static lock bytes,
    // which also lock the CC page: after them nothing can be written.
    const dyn = dynamicLockPage(cc.dataAreaBytes);
    if (dyn !== null) await writePage(tx, dyn, Buffer.from([0xff, 0xff, 0xff, 0x00]), counter);
    await writePage(tx, 3, Buffer.from([0xe1, 0x10 | cc.minorVersion, cc.dataAreaBytes / 8, 0x0f]), counter);
    await writePage(tx, 2, Buffer.from([0x00, 0x00, 0xff, 0xff]), counter);
    // A write's 90 00 says the tag got the APDU, not that the bits stuck (some clones ignore lock
    // writes): read the static lock bytes and the CC back. Dynamic lock bits are tag-specific, so
    // they are not checked; the static bits and CC read-only access are what NFC Forum readers honour.
    const back = await readPages(tx, 2, counter);
    if (back[2] !== 0xff || back[3] !== 0xff || (back[7]! & 0x0f) !== 0x0f) throw new NfcError('lock_failed', messages.lockFailed);
    info.readOnly = true;
  }
  return {
    uid: info.uid,
    type: info.type ?? 'Type 2 tag',
    url,
    apdus: counter.apdus,
    inspectApdus: takeInspectApdus(snapshot),
    pagesWritten: plan.length,
    locked: options.lock === true,
  };
}

/** Reads the TLV's pages back (one 16-byte read per 4 pages) and compares. */
async function verifyTlv(tx: Transmit, tlv: Buffer, counter: ApduCounter): Promise<void> {
  const padded = Buffer.alloc(Math.ceil(tlv.length / 4) * 4);
  tlv.copy(padded);
  for (const page of verifyReads(padded.length)) {
    const got = await readPages(tx, page, counter);
    const offset = (page - FIRST_DATA_PAGE) * 4;
    const want = padded.subarray(offset, offset + 16);
    if (!got.subarray(0, want.length).equals(want)) throw new NfcError('verify_failed', messages.verifyFailed);
  }
}

export function takeInspectApdus(snapshot: TagSnapshot): number {
  const n = snapshot.inspectApdus ?? 0;
  snapshot.inspectApdus = 0;
  return n;
}

/**
 * For a tag that already holds `url` (written before a crash, or lifted during the verify read):
 * reads it back and compares, exactly as a write's verification does, and writes nothing.
 */
export async function verifyUriOnTag(tx: Transmit, snapshot: TagSnapshot, url: string): Promise<WriteOutcome> {
  const { info, cc } = snapshot;
  if (!cc) throw new NfcError('not_formatted', messages.notFormatted);
  const counter: ApduCounter = { apdus: 0 };
  await verifyTlv(tx, ndefTlv(encodeUriMessage(url), cc.dataAreaBytes), counter);
  return {
    uid: info.uid,
    type: info.type ?? 'Type 2 tag',
    url,
    apdus: counter.apdus,
    inspectApdus: takeInspectApdus(snapshot),
    pagesWritten: 0,
    locked: false,
  };
}
