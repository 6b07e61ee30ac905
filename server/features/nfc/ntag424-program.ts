/**
 * Detecting and personalising an NTAG 424 DNA through any APDU transport (the bridge child
 * passes nfc-pcsc's transmit). Personalisation: write the NDEF file with the scan URL and the
 * SUN placeholders, authenticate with the factory key 0, enable SDM with ChangeFileSettings
 * (encrypted PICC data with key 1, truncated CMAC with key 2, file writable with key 0 only),
 * change keys 1..4 and then key 0 to the per-tag keys, read back the file settings and the NDEF
 * and check its mirror with the new keys. A tag left halfway (pulled, or a crash) is finished
 * on the next presentation: the keys' versions say which are already changed.
 */
import { decodeUriMessage, encodeUriMessage } from './ndef.ts';
import { decryptPiccData, NTAG424_KEY, SUN_PARAM, sdmMacMatches } from './ntag424/index.ts';
import { type Ev2Session, NATIVE_OK, Ntag424Io } from './ntag424-session.ts';
import { type ApduCounter, NfcError, type TagContent, type Transmit, type WriteOutcome } from './program.ts';

export const NTAG424_TYPE = 'NTAG 424 DNA';
const NDEF_APPLICATION = Buffer.from('D2760000850101', 'hex');
const NDEF_FILE_ID = 0xe104;
const NDEF_FILE_NO = 0x02;
const FACTORY_KEY = Buffer.alloc(16);
const FREE = 0x0e;
const NEVER = 0x0f;
/** SDMOptions: UID mirrored, SDMReadCtr mirrored, ASCII encoding. */
const SDM_OPTIONS = 0xc1;
const INS = { getFileSettings: 0xf5, changeFileSettings: 0x5f, getKeyVersion: 0x64 } as const;

export interface SdmSettings {
  options: number;
  ctrRet: number;
  metaRead: number;
  fileRead: number;
  uidOffset?: number;
  ctrOffset?: number;
  piccOffset?: number;
  macInputOffset?: number;
  macOffset?: number;
}

export interface Ntag424FileSettings {
  commMode: number;
  readWrite: number;
  change: number;
  read: number;
  write: number;
  size: number;
  sdm: SdmSettings | null;
}

/** What the inspection found, kept for the write on the same presentation. */
export interface Ntag424State {
  settings: Ntag424FileSettings;
  /** The NDEF file as read (with the SDM mirror filled in when SDM is on). */
  file: Buffer;
  /** Key 0's version when SDM is on (read to tell a finished tag from one left halfway), else null. */
  keyVersion0: number | null;
}

/** The per-tag keys (0..4) and their version, from the organization master key. */
export interface Ntag424Keys {
  keys: Buffer[];
  version: number;
}

export const ntag424Messages = {
  factoryKeyRefused:
    'This NTAG 424 DNA is not factory-new: its keys were changed by someone else, so Waymark cannot personalise it. Use a new tag.',
  otherMasterKey:
    'This NTAG 424 DNA was personalised with another master key (another Waymark organization, or a master key since replaced): Waymark cannot re-key it. Use a new tag.',
  personalisedElsewhere:
    'This NTAG 424 DNA was personalised by someone else (its keys are neither factory keys nor this organization’s): it cannot be re-keyed here. Use a new tag.',
  noKeys: 'NTAG 424 DNA tags need the organization’s tag master key, which this instance does not have: see docs/nfc.md, “Master key”.',
  verifyFailed: 'The NTAG 424 DNA read back differently from what was written (file settings, URL or its secure message): present it again.',
};

/** GetFileSettings' answer (datasheet §10.7.2); null when it is not a standard data file's. */
export function parseFileSettings(b: Buffer): Ntag424FileSettings | null {
  if (b.length < 7 || b[0] !== 0x00) return null;
  const option = b[1]!;
  const settings: Ntag424FileSettings = {
    commMode: option & 0x03,
    readWrite: b[2]! >> 4,
    change: b[2]! & 0x0f,
    read: b[3]! >> 4,
    write: b[3]! & 0x0f,
    size: b.readUIntLE(4, 3),
    sdm: null,
  };
  if (!(option & 0x40)) return settings;
  if (b.length < 10) return null;
  const sdm: SdmSettings = { options: b[7]!, ctrRet: b[8]! & 0x0f, metaRead: b[9]! >> 4, fileRead: b[9]! & 0x0f };
  let at = 10;
  const take = (): number => {
    const v = at + 3 <= b.length ? b.readUIntLE(at, 3) : -1;
    at += 3;
    return v;
  };
  if (sdm.metaRead === FREE && sdm.options & 0x80) sdm.uidOffset = take();
  if (sdm.metaRead === FREE && sdm.options & 0x40) sdm.ctrOffset = take();
  if (sdm.metaRead <= 4) sdm.piccOffset = take();
  if (sdm.fileRead <= 4) {
    sdm.macInputOffset = take();
    sdm.macOffset = take();
  }
  if (at > b.length) return null;
  settings.sdm = sdm;
  return settings;
}

function offset3(n: number): Buffer {
  const b = Buffer.alloc(3);
  b.writeUIntLE(n, 0, 3);
  return b;
}

/** The NDEF file Waymark writes: NLEN then the URI record of `url` (with the SUN placeholders). */
export function ndefFileFor(url: string): Buffer {
  const message = encodeUriMessage(url);
  const nlen = Buffer.alloc(2);
  nlen.writeUInt16BE(message.length);
  return Buffer.concat([nlen, message]);
}

/** Where the tag mirrors the PICC data (32 hex) and the SDMMAC (16 hex) in `file`. */
export function mirrorOffsets(file: Buffer): { picc: number; mac: number } {
  const find = (name: string, width: number) => {
    const at = file.indexOf(Buffer.from(`${name}=${'0'.repeat(width)}`, 'ascii'));
    if (at < 0) throw new Error(`the URL has no ${name} placeholder`);
    return at + name.length + 1;
  };
  return { picc: find(SUN_PARAM.picc, 32), mac: find(SUN_PARAM.cmac, 16) };
}

/** The settings Waymark gives the NDEF file: SDM on, read free, write and change with key 0. */
export function sdmSettingsFor(file: Buffer, size: number): Ntag424FileSettings {
  const { picc, mac } = mirrorOffsets(file);
  return {
    commMode: 0,
    readWrite: 0,
    change: 0,
    read: FREE,
    write: 0,
    size,
    sdm: { options: SDM_OPTIONS, ctrRet: NEVER, metaRead: NTAG424_KEY.sdmMetaRead, fileRead: NTAG424_KEY.sdmFileRead, piccOffset: picc, macInputOffset: mac, macOffset: mac },
  };
}

/** ChangeFileSettings' body for `s` (datasheet §10.7.1). */
function encodeChange(s: Ntag424FileSettings): Buffer {
  const head = Buffer.from([s.commMode | (s.sdm ? 0x40 : 0), (s.readWrite << 4) | s.change, (s.read << 4) | s.write]);
  const sdm = s.sdm;
  if (!sdm) return head;
  return Buffer.concat([
    head,
    Buffer.from([sdm.options, 0xf0 | sdm.ctrRet, (sdm.metaRead << 4) | sdm.fileRead]),
    offset3(sdm.piccOffset!),
    offset3(sdm.macInputOffset!),
    offset3(sdm.macOffset!),
  ]);
}

function sameSettings(a: Ntag424FileSettings, b: Ntag424FileSettings): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Does the file read hold `want`, apart from the mirror windows (which the tag fills in on every read)? */
function sameApartFromMirror(read: Buffer, want: Buffer): boolean {
  if (read.length < want.length) return false;
  const copy = Buffer.from(read.subarray(0, want.length));
  const { picc, mac } = mirrorOffsets(want);
  want.copy(copy, picc, picc, picc + 32);
  want.copy(copy, mac, mac, mac + 16);
  return copy.equals(want);
}

/** The URL of the NDEF file's URI record (mirror included), blank, or other data. */
export function contentOf(file: Buffer): TagContent {
  const nlen = file.length >= 2 ? file.readUInt16BE(0) : 0;
  if (nlen === 0) return { kind: 'blank' };
  if (2 + nlen > file.length) return { kind: 'other' };
  const url = decodeUriMessage(file.subarray(2, 2 + nlen));
  return url === null ? { kind: 'other' } : { kind: 'uri', url };
}

/**
 * Is this ISO-DEP card an NTAG 424 DNA? Selects the NDEF application, reads file 2's settings
 * (plain), the NDEF file, and key 0's version when SDM is on. Null for any other card (a phone,
 * a bank card): it does not answer one of these the way the 424 DNA does.
 */
export async function inspectNtag424(tx: Transmit, counter: ApduCounter): Promise<Ntag424State | null> {
  const io = new Ntag424Io(tx, counter);
  const app = await io.iso(Buffer.concat([Buffer.from([0x00, 0xa4, 0x04, 0x0c, 0x07]), NDEF_APPLICATION]));
  if (app.sw !== 0x9000) return null;
  const fs = await io.native(INS.getFileSettings, Buffer.from([NDEF_FILE_NO]));
  const settings = fs.status === NATIVE_OK ? parseFileSettings(fs.data) : null;
  if (!settings || settings.size < 64) return null;
  const file = await readNdefFile(io, true);
  if (!file) return null;
  let keyVersion0: number | null = null;
  if (settings.sdm) {
    const kv = await io.native(INS.getKeyVersion, Buffer.from([0x00]));
    keyVersion0 = kv.status === NATIVE_OK && kv.data.length >= 1 ? kv.data[0]! : null;
  }
  return { settings, file, keyVersion0 };
}

async function readNdefFile(io: Ntag424Io, select: boolean): Promise<Buffer | null> {
  if (select) {
    const sel = await io.iso(Buffer.from([0x00, 0xa4, 0x00, 0x0c, 0x02, NDEF_FILE_ID >> 8, NDEF_FILE_ID & 0xff]));
    if (sel.sw !== 0x9000) return null;
  }
  const r = await io.iso(Buffer.from([0x00, 0xb0, 0x00, 0x00, 0x00]), 258);
  return r.sw === 0x9000 ? Buffer.from(r.data) : null;
}

/** Checks the mirror of a read: the placeholders' surroundings, the PICC data (this UID) and the MAC with these keys. */
function checkMirror(read: Buffer, want: Buffer, uid: Buffer, keys: Buffer[]): { readCounter: number } | null {
  if (!sameApartFromMirror(read, want)) return null;
  const { picc, mac } = mirrorOffsets(want);
  const piccHex = read.subarray(picc, picc + 32).toString('ascii');
  const macHex = read.subarray(mac, mac + 16).toString('ascii');
  if (!/^[0-9A-F]{32}$/.test(piccHex) || !/^[0-9A-F]{16}$/.test(macHex)) return null;
  const data = decryptPiccData(keys[NTAG424_KEY.sdmMetaRead]!, Buffer.from(piccHex, 'hex'));
  if (!data || !data.uid.equals(uid)) return null;
  if (!sdmMacMatches(keys[NTAG424_KEY.sdmFileRead]!, data, Buffer.from(macHex, 'hex'))) return null;
  return { readCounter: data.readCounter };
}

export interface Ntag424Outcome extends WriteOutcome {
  /** The tag already held this URL with these keys: verified, nothing written. */
  recognised: boolean;
  keyVersion: number;
  /** SDMReadCtr mirrored by the verify read. */
  readCounter: number;
}

/**
 * Brings the tag to "personalised for `url` with `keys`" from wherever it is (factory-new,
 * halfway, or already done) and verifies it. Refuses a tag whose key 0 is neither the factory key
 * nor this organization's with `wrong_key`. Also returns the tag's state now (for another write
 * on the same presentation).
 */
export async function personaliseNtag424(
  tx: Transmit,
  state: Ntag424State,
  uid: Buffer,
  url: string,
  keys: Ntag424Keys,
  previous?: Ntag424Keys,
): Promise<{ outcome: Ntag424Outcome; state: Ntag424State }> {
  const counter: ApduCounter = { apdus: 0 };
  const io = new Ntag424Io(tx, counter);
  const want = ndefFileFor(url);
  if (want.length > state.settings.size) {
    throw new NfcError('too_small', `Tag too small: the URL needs ${want.length} bytes, this ${NTAG424_TYPE} holds ${state.settings.size}.`);
  }
  const target = sdmSettingsFor(want, state.settings.size);
  const sdmOn = state.settings.sdm !== null;
  const keysDone = sdmOn && state.keyVersion0 === keys.version;
  // Keyed from an older version of this organization's master key: re-keyed with that version's keys.
  const rekey = !keysDone && sdmOn && previous !== undefined && state.keyVersion0 === previous.version;
  const oldKeys: Ntag424Keys = rekey ? previous : { keys: Array(5).fill(FACTORY_KEY), version: 0 };
  const settingsDone = sdmOn && sameSettings(state.settings, target);
  let needWrite = !sameApartFromMirror(state.file, want);
  const writeFree = state.settings.write === FREE || state.settings.readWrite === FREE;
  let written = 0;

  const writeNdef = async () => {
    // NDEF-safe: the body with NLEN 0 (an empty message), then the real NLEN.
    const body = Buffer.concat([Buffer.alloc(2), want.subarray(2)]);
    for (const [offset, data] of [[0, body], [0, want.subarray(0, 2)]] as const) {
      const r = await io.iso(Buffer.concat([Buffer.from([0x00, 0xd6, 0x00, offset, data.length]), data]));
      if (r.sw !== 0x9000) throw new NfcError('read_only', 'The NTAG 424 DNA refused the NDEF write.');
      written++;
    }
  };

  if (keysDone && settingsDone && !needWrite) {
    // Finished before (e.g. a crash after the last key): the inspection's read proves the keys.
    const mirror = checkMirror(state.file, want, uid, keys.keys);
    if (!mirror) throw new NfcError('wrong_key', ntag424Messages.otherMasterKey);
    return { outcome: outcome(url, counter, written, true, keys.version, mirror.readCounter), state };
  }
  if (!sdmOn && needWrite && writeFree) {
    await writeNdef();
    needWrite = false;
  }
  const key0 = keysDone ? keys.keys[0]! : oldKeys.keys[0]!;
  const session = await io.authenticate(0, key0);
  if (!session) {
    throw new NfcError(
      'wrong_key',
      keysDone || rekey ? ntag424Messages.otherMasterKey : sdmOn ? ntag424Messages.personalisedElsewhere : ntag424Messages.factoryKeyRefused,
    );
  }
  const changeSettings = async (s: Ntag424FileSettings) => {
    const r = await io.secure(session, INS.changeFileSettings, Buffer.from([NDEF_FILE_NO]), encodeChange(s), { full: true });
    if (r.status !== NATIVE_OK) throw new NfcError('io_error', `The NTAG 424 DNA refused ChangeFileSettings (91 ${hex(r.status)}).`);
  };
  if (needWrite) {
    // SDM already on (another node's URL, or someone changed it): open the file for writing with key 0 first.
    await changeSettings({ ...state.settings, commMode: 0, readWrite: FREE, change: 0, read: FREE, write: FREE, sdm: null });
    await writeNdef();
  }
  if (needWrite || !settingsDone) await changeSettings(target);
  if (!keysDone) await changeKeys(io, session, keys, oldKeys, sdmOn);
  // Verify unauthenticated, as a phone reads: changing key 0 ended the session; otherwise end it by selecting again.
  if (keysDone) {
    await io.iso(Buffer.concat([Buffer.from([0x00, 0xa4, 0x04, 0x0c, 0x07]), NDEF_APPLICATION]));
  }
  const fs = await io.native(INS.getFileSettings, Buffer.from([NDEF_FILE_NO]));
  const back = fs.status === NATIVE_OK ? parseFileSettings(fs.data) : null;
  if (!back || !sameSettings(back, target)) throw new NfcError('verify_failed', ntag424Messages.verifyFailed);
  const read = await readNdefFile(io, keysDone);
  const mirror = read ? checkMirror(read, want, uid, keys.keys) : null;
  if (!mirror) throw new NfcError('verify_failed', ntag424Messages.verifyFailed);
  return { outcome: outcome(url, counter, written, false, keys.version, mirror.readCounter), state: { settings: back, file: read!, keyVersion0: keys.version } };
}

/**
 * Keys 1..4, then key 0 (the authenticated key: the session ends with it), from `old` (the
 * factory keys at version 0, or an older master key version's keys when re-keying). On a tag
 * found with SDM already on (left halfway, or being re-keyed, maybe interrupted before) each key's
 * version is read first (MAC mode) and keys already changed are skipped: ChangeKey needs the
 * right old key.
 */
async function changeKeys(io: Ntag424Io, session: Ev2Session, keys: Ntag424Keys, old: Ntag424Keys, resume: boolean): Promise<void> {
  for (const keyNo of [1, 2, 3, 4, 0]) {
    if (resume && keyNo !== 0) {
      const v = await io.secure(session, INS.getKeyVersion, Buffer.from([keyNo]), Buffer.alloc(0), { full: false });
      if (v.status !== NATIVE_OK) throw new NfcError('io_error', `The NTAG 424 DNA refused GetKeyVersion (91 ${hex(v.status)}).`);
      if (v.data[0] === keys.version) continue;
      if (v.data[0] !== old.version) throw new NfcError('wrong_key', ntag424Messages.personalisedElsewhere);
    }
    const r = await io.changeKey(session, keyNo, keys.keys[keyNo]!, keys.version, old.keys[keyNo]!);
    if (r.status !== NATIVE_OK) throw new NfcError('io_error', `The NTAG 424 DNA refused ChangeKey for key ${keyNo} (91 ${hex(r.status)}).`);
  }
}

function hex(n: number): string {
  return n.toString(16).toUpperCase().padStart(2, '0');
}

function outcome(url: string, counter: ApduCounter, written: number, recognised: boolean, keyVersion: number, readCounter: number): Ntag424Outcome {
  return {
    uid: '',
    type: NTAG424_TYPE,
    url,
    apdus: counter.apdus,
    inspectApdus: 0,
    pagesWritten: written,
    locked: false,
    // NTAG21x options: a 424 DNA proves its taps with SDM instead.
    mirror: false,
    protected: false,
    recognised,
    keyVersion,
    readCounter,
  };
}
