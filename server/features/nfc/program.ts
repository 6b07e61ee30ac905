/**
 * Reading and writing a Type 2 tag through any APDU transport (PC/SC pseudo-APDUs FF CA / FF B0 /
 * FF D6, as PC/SC part 3 defines for contactless storage cards). No PC/SC library here: the
 * bridge child passes nfc-pcsc's transmit, tests can pass a fake.
 */
import type { NfcErrorCodeT } from '../../schemas/nfc.ts';
import { decodeUriMessage, encodeUriMessage } from './ndef.ts';
import { contentOf, inspectNtag424, type Ntag424State, NTAG424_TYPE } from './ntag424-program.ts';
import {
  configBytes,
  configPageFor,
  isPasswordProtected,
  MIRROR_PLACEHOLDER,
  mirrorPosition,
  parseConfig,
  type Ntag21xConfig,
  type TagPassword,
} from './ntag21x.ts';
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

/** The codes are the API's enum (server/schemas/nfc.ts), their single source. */
export type NfcErrorCode = NfcErrorCodeT;

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
  passwordProtected:
    'This tag is password-protected by someone else (another organization or another program): Waymark does not have its password and cannot rewrite it. Use another tag.',
  configFailed:
    'The tag did not take its mirror or password configuration (it read back different). The URL is written; present the tag again to retry, or use another tag.',
  needsNtag21x: (type: string) => `The counter mirror and the password need an NTAG213, NTAG215 or NTAG216; this is a ${type}. Use an NTAG, or write without them.`,
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
  ntag424?: {
    sdm: boolean;
    keyVersion: number | null;
    /** Set by the parent after a write on this presentation: the SDMReadCtr its verify read mirrored (check mode). */
    verifiedCounter?: number;
  };
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

/**
 * A native NTAG command through the reader's pass-through (PN53x InCommunicateThru, as ACR122U-family
 * readers take it: `FF 00 00 00 Lc D4 42 <command>`). Null when the tag answered NAK or nothing.
 */
async function nativeCommand(tx: Transmit, command: Buffer, counter: ApduCounter): Promise<Buffer | null> {
  const r = await send(tx, Buffer.concat([Buffer.from([0xff, 0x00, 0x00, 0x00, command.length + 2, 0xd4, 0x42]), command]), 40, counter);
  if (!ok(r) || r.length < 5 || r[0] !== 0xd5 || r[1] !== 0x43 || r[2] !== 0x00) return null;
  return r.subarray(3, -2);
}

/** PWD_AUTH (1B): true when the tag answered with the expected PACK. */
async function passwordAuth(tx: Transmit, password: TagPassword, counter: ApduCounter): Promise<boolean> {
  const pack = await nativeCommand(tx, Buffer.concat([Buffer.from([0x1b]), password.pwd]), counter);
  return pack !== null && pack.subarray(0, 2).equals(password.pack);
}

/** READ_CNT (39 02): the NFC counter, null when the tag refuses it. */
export async function readCounter(tx: Transmit, counter: ApduCounter = { apdus: 0 }): Promise<number | null> {
  const r = await nativeCommand(tx, Buffer.from([0x39, 0x02]), counter);
  return r && r.length >= 3 ? r[0]! | (r[1]! << 8) | (r[2]! << 16) : null;
}

export interface WriteOptions {
  lock?: boolean | undefined;
  /** Write the URL with the mirror placeholder and turn on the UID + NFC counter mirror. */
  mirror?: boolean | undefined;
  /** Protect the tag with `password` (AUTH0/PWD/PACK). */
  protect?: boolean | undefined;
  /** This tag's password (derived by the server): authenticates a protected tag before rewriting it. */
  password?: { pwd: string; pack: string } | undefined;
  /** The password to protect it with when it differs from `password` (a newer master key version); default `password`. */
  newPassword?: { pwd: string; pack: string } | undefined;
  /** The server wrote this tag protected or mirrored before: read its configuration first. */
  configured?: boolean | undefined;
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
  /** The UID + counter mirror is on. */
  mirror: boolean;
  /** The tag is password-protected (with its derived password). */
  protected: boolean;
}

/**
 * Writes `url` as an NDEF URI message in the NDEF-safe page order, reads it back (one 16-byte
 * read per 4 pages) and compares, configures an NTAG21x's mirror and password when asked, then
 * optionally locks the tag permanently.
 */
export async function writeUriToTag(tx: Transmit, snapshot: TagSnapshot, url: string, options: WriteOptions = {}): Promise<WriteOutcome> {
  const { info, cc } = snapshot;
  if (info.refusal) throw new NfcError(info.refusal.code, info.refusal.message);
  if (!cc) throw new NfcError('not_formatted', messages.notFormatted);
  const cfgPage = configPageFor(cc.dataAreaBytes);
  const wantsConfig = options.mirror === true || options.protect === true;
  if (wantsConfig && cfgPage === null) throw new NfcError('unsupported_card', messages.needsNtag21x(cc.type));
  const message = encodeUriMessage(url);
  const need = bytesNeeded(message);
  if (need > cc.dataAreaBytes) throw new NfcError('too_small', messages.tooSmall(need, cc.dataAreaBytes, cc.type));
  const tlv = ndefTlv(message, cc.dataAreaBytes);
  const mirror = options.mirror ? mirrorPosition(tlv) : null;
  if (options.mirror && !mirror) throw new NfcError('io_error', 'The URL has no mirror placeholder.');
  const asBytes = (p: { pwd: string; pack: string } | undefined) => (p ? { pwd: Buffer.from(p.pwd, 'hex'), pack: Buffer.from(p.pack, 'hex') } : null);
  const password = asBytes(options.password);
  const newPassword = asBytes(options.newPassword) ?? password;
  if (options.protect && !newPassword) throw new NfcError('io_error', 'No password to protect the tag with.');
  const counter: ApduCounter = { apdus: 0 };

  // The configuration is read only when it matters (mirror or password asked, or set by an
  // earlier write), so a plain tag costs no extra APDU; a refused write reads it to explain.
  let config: Ntag21xConfig | null = null;
  const readConfig = async () => (config = parseConfig(await readPages(tx, cfgPage!, counter)));
  const unlock = async (cfg: Ntag21xConfig) => {
    if (!isPasswordProtected(cfg, cfgPage!)) return;
    if (!password || !(await passwordAuth(tx, password, counter))) throw new NfcError('password_protected', messages.passwordProtected);
  };
  if (cfgPage !== null && (wantsConfig || options.configured)) await unlock(await readConfig());

  const plan = planWrite(tlv, snapshot.firstDataPage);
  for (const [i, w] of plan.entries()) {
    try {
      await writePage(tx, w.page, w.data, counter);
    } catch (err) {
      // The first write refused: a password, rather than lock bits, may be why.
      if (i > 0 || config !== null || cfgPage === null || !(err instanceof NfcError) || err.code !== 'read_only') throw err;
      const cfg = await readConfig();
      if (!isPasswordProtected(cfg, cfgPage)) throw err;
      await unlock(cfg);
      await writePage(tx, w.page, w.data, counter);
    }
  }
  snapshot.firstDataPage = Buffer.from(tlv.subarray(0, 4));
  // Reads answer with the mirror applied wherever an earlier configuration put it.
  const mask = mirror ? { from: mirror.offset, to: mirror.offset + MIRROR_PLACEHOLDER.length } : null;
  let verified = true;
  try {
    await verifyTlv(tx, tlv, counter, mask);
  } catch (err) {
    // A mirror left on by an earlier write garbles the read-back: find out, then turn it off below.
    if (!(err instanceof NfcError) || err.code !== 'verify_failed' || cfgPage === null) throw err;
    const cfg = config ?? (await readConfig());
    if (cfg.mirrorConf === 0) throw err;
    verified = false;
  }
  info.content = { kind: 'uri', url };

  let isProtected = false;
  const cfgNow = config as Ntag21xConfig | null;
  if (cfgPage !== null && cfgNow !== null) {
    const wasProtected = isPasswordProtected(cfgNow, cfgPage);
    isProtected = options.protect === true;
    const { cfg0, cfg1 } = configBytes({ mirror, protect: isProtected });
    // PWD and PACK before AUTH0, so the protection starts with the right password in place.
    if (isProtected) {
      await writePage(tx, cfgPage + 2, newPassword!.pwd, counter);
      await writePage(tx, cfgPage + 3, Buffer.concat([newPassword!.pack, Buffer.alloc(2)]), counter);
    }
    await writePage(tx, cfgPage + 1, cfg1, counter);
    await writePage(tx, cfgPage, cfg0, counter);
    const back = await readPages(tx, cfgPage, counter);
    if (!back.subarray(0, 4).equals(cfg0) || back[4] !== cfg1[0]) throw new NfcError('config_failed', messages.configFailed);
    // The password itself reads back as zeros: a PWD_AUTH proves it (a wrong one would lose the tag).
    const passwordChanged = !wasProtected || !password || !newPassword!.pwd.equals(password.pwd);
    if (isProtected && passwordChanged && !(await passwordAuth(tx, newPassword!, counter))) throw new NfcError('config_failed', messages.configFailed);
    if (mirror || !verified) await verifyTlv(tx, tlv, counter, mask, mirror ? info.uid : undefined);
  }

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
    mirror: mirror !== null,
    protected: isProtected,
  };
}

/**
 * Reads the TLV's pages back (one 16-byte read per 4 pages) and compares. Inside `mask` (the
 * mirror placeholder) the tag answers with its mirror: any `UIDxCOUNTER`-shaped text is accepted,
 * or, with `uid`, only that UID's.
 */
async function verifyTlv(tx: Transmit, tlv: Buffer, counter: ApduCounter, mask: { from: number; to: number } | null = null, uid?: string): Promise<void> {
  const padded = Buffer.alloc(Math.ceil(tlv.length / 4) * 4);
  tlv.copy(padded);
  const got = Buffer.alloc(padded.length);
  for (const page of verifyReads(padded.length)) {
    const offset = (page - FIRST_DATA_PAGE) * 4;
    (await readPages(tx, page, counter)).copy(got, offset, 0, Math.min(16, padded.length - offset));
  }
  if (!mask) {
    if (!got.equals(padded)) throw new NfcError('verify_failed', messages.verifyFailed);
    return;
  }
  const outside = (b: Buffer) => Buffer.concat([b.subarray(0, mask.from), b.subarray(mask.to)]);
  const mirrored = got.subarray(mask.from, mask.to).toString('latin1');
  const shape = uid ? new RegExp(`^${uid.replaceAll(':', '')}x[0-9A-F]{6}$`) : /^[0-9A-F]{14}x[0-9A-F]{6}$/;
  const inside = uid ? shape.test(mirrored) : mirrored === MIRROR_PLACEHOLDER || shape.test(mirrored);
  if (!outside(got).equals(outside(padded)) || !inside) throw new NfcError('verify_failed', messages.verifyFailed);
}

export function takeInspectApdus(snapshot: TagSnapshot): number {
  const n = snapshot.inspectApdus ?? 0;
  snapshot.inspectApdus = 0;
  return n;
}

/**
 * For a tag that already holds `url` (written before a crash, or lifted during the verify read):
 * reads it back and compares, exactly as a write's verification does, and writes nothing. An
 * NTAG21x's configuration is read too (1 APDU), to report its mirror and password as they are.
 */
export async function verifyUriOnTag(tx: Transmit, snapshot: TagSnapshot, url: string): Promise<WriteOutcome> {
  const { info, cc } = snapshot;
  if (!cc) throw new NfcError('not_formatted', messages.notFormatted);
  const counter: ApduCounter = { apdus: 0 };
  await verifyTlv(tx, ndefTlv(encodeUriMessage(url), cc.dataAreaBytes), counter);
  // The write before the crash may have protected it already (the URL is written before the
  // password): the log must say so, or a later rewrite would not know to authenticate.
  const cfgPage = configPageFor(cc.dataAreaBytes);
  const config = cfgPage === null ? null : parseConfig(await readPages(tx, cfgPage, counter));
  return {
    uid: info.uid,
    type: info.type ?? 'Type 2 tag',
    url,
    apdus: counter.apdus,
    inspectApdus: takeInspectApdus(snapshot),
    pagesWritten: 0,
    locked: false,
    mirror: config !== null && config.mirrorConf !== 0,
    protected: config !== null && isPasswordProtected(config, cfgPage!),
  };
}
