/**
 * A virtual NXP NTAG 424 DNA (NT4H2421Gx) on vsmartcard's vpcd, so the real PC/SC stack sees an
 * ISO 14443-4 (ISO-DEP) card. What it answers, following the datasheet and AN12196:
 * - ISO 7816-4: ISOSelectFile (the NDEF application by DF name D2760000850101, its files by ID
 *   E103/E104/E105), ISOReadBinary, ISOUpdateBinary; the reader's GET UID (FF CA).
 * - Native commands wrapped in ISO 7816-4 (CLA 90, SW 91 xx): AuthenticateEV2First (AES-128,
 *   two frames), then secure messaging with the command counter in MAC mode (GetFileSettings,
 *   GetKeyVersion) and FULL mode (ChangeFileSettings, ChangeKey with the XOR + CRC32 rule for
 *   keys other than the authenticated one); without authentication GetFileSettings and
 *   GetKeyVersion answer in plain.
 * - SDM on the NDEF file: an unauthenticated read mirrors the encrypted PICC data (UID +
 *   SDMReadCtr), or the plain UID and counter, and the truncated SDMMAC into the file; the
 *   counter advances once per tap: the first read after the file is selected.
 * Its crypto is ntag424-card-crypto.ts, independent of the server's.
 *
 * Faults for tests: `pullAt(pred)` (the card leaves instead of answering a matching command) and
 * `holdAt(pred)` (the command is applied, its reply held until `release()`).
 */
import { randomBytes } from 'node:crypto';
import {
  cbcDecrypt,
  cbcEncrypt,
  cmac,
  crc32nk,
  ev2Iv,
  ev2SessionKeys,
  pad,
  rotateLeft,
  sdmMacKey,
  truncate,
  unpad,
} from './ntag424-card-crypto.ts';
import { type CardAnswer, VpcdCard } from './vpcd-card.ts';

/** ATR an ACR122-style PC/SC reader reports for an NTAG 424 DNA (ISO 14443-4 Type A). */
export const ATR_NTAG424 = Buffer.from('3B8180018080', 'hex');
export const NDEF_APPLICATION = Buffer.from('D2760000850101', 'hex');

const SW_OK = Buffer.from([0x90, 0x00]);
const SW_NOT_FOUND = Buffer.from([0x6a, 0x82]);
const SW_SECURITY = Buffer.from([0x69, 0x82]);
const SW_WRONG_LENGTH = Buffer.from([0x67, 0x00]);
const SW_INS = Buffer.from([0x6d, 0x00]);
const SW_CLA = Buffer.from([0x6e, 0x00]);
const N_OK = 0x00;
const N_MORE = 0xaf;
const N_INTEGRITY = 0x1e;
const N_LENGTH = 0x7e;
const N_PARAMETER = 0x9e;
const N_PERMISSION = 0x9d;
const N_NO_KEY = 0x40;
const N_AUTH = 0xae;
const N_NO_FILE = 0xf0;
const N_ABORTED = 0xca;

export interface SdmSettings {
  /** Bit 7 UID mirror, bit 6 SDMReadCtr mirror, bit 4 encrypted file data (not modelled), bit 0 ASCII. */
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

export interface FileSettings {
  /** 0 plain, 1 MAC, 3 full. */
  commMode: number;
  read: number;
  write: number;
  readWrite: number;
  change: number;
  sdm: SdmSettings | null;
}

interface CardFile {
  id: number;
  data: Buffer;
  settings: FileSettings;
}

interface Session {
  keyNo: number;
  enc: Buffer;
  mac: Buffer;
  ti: Buffer;
  ctr: number;
}

export interface VirtualNtag424Options {
  uid?: Buffer;
  /** Application keys 0..4 (factory: all zero). */
  keys?: Buffer[];
}

export class VirtualNtag424 extends VpcdCard {
  readonly uid: Buffer;
  readonly atr = ATR_NTAG424;
  readonly keys: Buffer[];
  readonly keyVersions = [0, 0, 0, 0, 0];
  readonly files: Map<number, CardFile>;
  /** SDMReadCtr of the NDEF file (24 bits). */
  sdmReadCtr = 0;
  readonly stats = { apdus: 0, presentations: 0, taps: 0 };
  /** Every command's INS (native: 0x90xx, ISO: 0x00xx), in order, all presentations. */
  readonly commandLog: number[] = [];
  private appSelected = false;
  private selected: CardFile | null = null;
  private counted = false;
  private pendingAuth: { keyNo: number; rndB: Buffer } | null = null;
  private session: Session | null = null;
  private pullWhen: ((cmd: Buffer) => boolean) | null = null;
  private holdWhen: ((cmd: Buffer) => boolean) | null = null;
  private holdReached: (() => void) | null = null;

  constructor(options: VirtualNtag424Options = {}) {
    super();
    this.uid = options.uid ?? Buffer.concat([Buffer.from([0x04]), randomBytes(6)]);
    if (this.uid.length !== 7) throw new Error('an NTAG 424 DNA UID has 7 bytes');
    this.keys = (options.keys ?? [0, 1, 2, 3, 4].map(() => Buffer.alloc(16))).map((k) => Buffer.from(k));
    const cc = Buffer.from('001720010000ff0406e104010000000506e10500808283000000000000000000', 'hex');
    this.files = new Map([
      [0xe103, { id: 1, data: cc, settings: { commMode: 0, readWrite: 0, change: 0, read: 0xe, write: 0, sdm: null } }],
      [0xe104, { id: 2, data: Buffer.alloc(256), settings: { commMode: 0, readWrite: 0xe, change: 0, read: 0xe, write: 0xe, sdm: null } }],
      [0xe105, { id: 3, data: Buffer.alloc(128), settings: { commMode: 3, readWrite: 3, change: 0, read: 2, write: 3, sdm: null } }],
    ]);
  }

  /** File 2, the NDEF file. */
  get ndefFile(): CardFile {
    return this.files.get(0xe104)!;
  }

  /** The NDEF message in the file as stored (the SDM placeholders, not a mirror). */
  storedNdef(): Buffer {
    const data = this.ndefFile.data;
    return Buffer.from(data.subarray(2, 2 + data.readUInt16BE(0)));
  }

  /** A phone tapping the tag: selects the NDEF application and file and reads NLEN and the message, as an NFC Forum reader does. */
  tap(): Buffer {
    const ok = (r: Buffer | null): Buffer => {
      if (!r || r.length < 2 || r[r.length - 2] !== 0x90) throw new Error(`tap failed: ${r?.toString('hex')}`);
      return r.subarray(0, -2);
    };
    ok(this.apdu(Buffer.concat([Buffer.from([0x00, 0xa4, 0x04, 0x00, 0x07]), NDEF_APPLICATION, Buffer.from([0x00])])));
    ok(this.apdu(Buffer.from([0x00, 0xa4, 0x00, 0x0c, 0x02, 0xe1, 0x04])));
    const nlen = ok(this.apdu(Buffer.from([0x00, 0xb0, 0x00, 0x00, 0x02]))).readUInt16BE(0);
    this.stats.taps++;
    return Buffer.from(ok(this.apdu(Buffer.from([0x00, 0xb0, 0x00, 0x02, nlen]))));
  }

  /** Fault: instead of answering the first command matching `pred`, leave the reader (nothing applied). */
  pullAt(pred: (cmd: Buffer) => boolean): void {
    this.pullWhen = pred;
  }

  /** Fault: apply the first command matching `pred` but hold its reply until `release()`. Resolves when it arrives. */
  holdAt(pred: (cmd: Buffer) => boolean): Promise<void> {
    this.holdWhen = pred;
    return new Promise((resolve) => {
      this.holdReached = resolve;
    });
  }

  protected presented(): void {
    this.stats.presentations++;
  }

  /** A field reset: volatile state (selection, authentication, the tap) is lost; files and keys stay. */
  protected powerOn(): void {
    this.appSelected = false;
    this.selected = null;
    this.counted = false;
    this.pendingAuth = null;
    this.session = null;
  }

  protected answer(cmd: Buffer): CardAnswer {
    const reply = this.apdu(cmd);
    if (reply && this.holdWhen?.(cmd)) {
      this.holdWhen = null;
      const held = this.hold(reply);
      this.holdReached?.();
      this.holdReached = null;
      return held;
    }
    return reply;
  }

  /** Answers one command APDU; null when the card left the reader instead (the `pullAt` fault). */
  apdu(cmd: Buffer): Buffer | null {
    this.stats.apdus++;
    if (this.pullWhen?.(cmd)) {
      this.pullWhen = null;
      return null;
    }
    if (cmd.length < 4) return SW_WRONG_LENGTH;
    this.commandLog.push((cmd[0] === 0x90 ? 0x9000 : 0) | cmd[1]!);
    if (cmd[0] === 0xff && cmd[1] === 0xca) return Buffer.concat([this.uid, SW_OK]);
    if (cmd[0] === 0x00) return this.iso(cmd);
    if (cmd[0] === 0x90) return this.native(cmd);
    return SW_CLA;
  }

  // ---- ISO 7816-4 ---------------------------------------------------------------------------

  private iso(cmd: Buffer): Buffer {
    const ins = cmd[1]!;
    const p1 = cmd[2]!;
    const p2 = cmd[3]!;
    const lc = cmd.length > 5 ? cmd[4]! : 0;
    const data = cmd.subarray(5, 5 + lc);
    if (ins === 0xa4) {
      if (p1 === 0x04) {
        if (!data.equals(NDEF_APPLICATION)) return SW_NOT_FOUND;
        this.appSelected = true;
        this.selected = null;
        this.session = null; // selecting an application ends an authentication
        this.pendingAuth = null;
        this.counted = false;
        return SW_OK;
      }
      if (p1 === 0x00 && data.length === 2) {
        const file = this.appSelected ? this.files.get(data.readUInt16BE(0)) : undefined;
        if (!file) return SW_NOT_FOUND;
        this.selected = file;
        this.counted = false;
        return SW_OK;
      }
      return SW_NOT_FOUND;
    }
    if (ins === 0xb0 || ins === 0xd6) {
      const file = this.selected;
      if (!file) return SW_NOT_FOUND;
      const offset = ((p1 & 0x7f) << 8) | p2;
      const s = file.settings;
      if (ins === 0xb0) {
        if (s.read !== 0xe && s.readWrite !== 0xe) return SW_SECURITY;
        const le = cmd.length === 5 ? cmd[4]! || 256 : 256;
        if (offset >= file.data.length) return Buffer.from([0x6b, 0x00]);
        const content = s.sdm && !this.session ? this.mirror(file, s.sdm) : file.data;
        return Buffer.concat([content.subarray(offset, Math.min(offset + le, content.length)), SW_OK]);
      }
      if (s.write !== 0xe && s.readWrite !== 0xe) return SW_SECURITY;
      if (offset + data.length > file.data.length) return SW_WRONG_LENGTH;
      data.copy(file.data, offset);
      return SW_OK;
    }
    return SW_INS;
  }

  /** The NDEF file as an unauthenticated reader sees it: SDM mirrors filled in; the first read of a tap advances SDMReadCtr. */
  private mirror(file: CardFile, sdm: SdmSettings): Buffer {
    if (!this.counted) {
      this.counted = true;
      if (sdm.options & 0x40) this.sdmReadCtr = (this.sdmReadCtr + 1) & 0xffffff;
    }
    const out = Buffer.from(file.data);
    const ctr = Buffer.alloc(3);
    ctr.writeUIntLE(this.sdmReadCtr, 0, 3);
    const hex = (b: Buffer) => Buffer.from(b.toString('hex').toUpperCase(), 'ascii');
    if (sdm.metaRead <= 4) {
      const tag = (sdm.options & 0x80 ? 0x80 : 0) | (sdm.options & 0x40 ? 0x40 : 0) | 0x07;
      const plain = Buffer.concat([Buffer.from([tag]), sdm.options & 0x80 ? this.uid : Buffer.alloc(0), sdm.options & 0x40 ? ctr : Buffer.alloc(0)]);
      const block = Buffer.concat([plain, randomBytes(16 - plain.length)]);
      hex(cbcEncrypt(this.keys[sdm.metaRead]!, Buffer.alloc(16), block)).copy(out, sdm.piccOffset!);
    } else if (sdm.metaRead === 0xe) {
      if (sdm.options & 0x80) hex(this.uid).copy(out, sdm.uidOffset!);
      if (sdm.options & 0x40) hex(Buffer.from(ctr).reverse()).copy(out, sdm.ctrOffset!);
    }
    if (sdm.fileRead <= 4) {
      const key = sdmMacKey(this.keys[sdm.fileRead]!, this.uid, this.sdmReadCtr);
      const mac = truncate(cmac(key, out.subarray(sdm.macInputOffset!, sdm.macOffset!)));
      hex(mac).copy(out, sdm.macOffset!);
    }
    return out;
  }

  // ---- native commands ----------------------------------------------------------------------

  private native(cmd: Buffer): Buffer {
    const ins = cmd[1]!;
    const lc = cmd.length > 5 ? cmd[4]! : 0;
    const data = cmd.subarray(5, 5 + lc);
    const fail = (code: number) => {
      this.session = null; // an error ends the authentication (datasheet §9.1.4)
      this.pendingAuth = null;
      return Buffer.from([0x91, code]);
    };
    if (!this.appSelected) return fail(N_ABORTED);
    if (ins === 0x71) {
      const keyNo = data[0]!;
      if (data.length < 2) return fail(N_LENGTH);
      if (keyNo > 4) return fail(N_NO_KEY);
      this.session = null;
      const rndB = randomBytes(16);
      this.pendingAuth = { keyNo, rndB };
      return Buffer.concat([cbcEncrypt(this.keys[keyNo]!, Buffer.alloc(16), rndB), Buffer.from([0x91, N_MORE])]);
    }
    if (ins === 0xaf) {
      const auth = this.pendingAuth;
      this.pendingAuth = null;
      if (!auth) return fail(N_ABORTED);
      if (data.length !== 32) return fail(N_LENGTH);
      const key = this.keys[auth.keyNo]!;
      const plain = cbcDecrypt(key, Buffer.alloc(16), data);
      const rndA = plain.subarray(0, 16);
      if (!plain.subarray(16).equals(rotateLeft(auth.rndB))) return fail(N_AUTH);
      const ti = randomBytes(4);
      const { enc, mac } = ev2SessionKeys(key, rndA, auth.rndB);
      this.session = { keyNo: auth.keyNo, enc, mac, ti, ctr: 0 };
      const reply = cbcEncrypt(key, Buffer.alloc(16), Buffer.concat([ti, rotateLeft(rndA), Buffer.alloc(12)]));
      return Buffer.concat([reply, Buffer.from([0x91, N_OK])]);
    }
    if (ins === 0xf5 || ins === 0x64) {
      // GetFileSettings / GetKeyVersion: MAC mode when authenticated, plain otherwise.
      const header = data.subarray(0, 1);
      if (this.session) {
        const opened = this.openCommand(ins, header, data.subarray(1), false);
        if (!opened) return fail(N_INTEGRITY);
      } else if (data.length !== 1) return fail(N_LENGTH);
      let body: Buffer;
      if (ins === 0xf5) {
        const file = [...this.files.values()].find((f) => f.id === header[0]);
        if (!file) return fail(N_NO_FILE);
        body = encodeSettings(file);
      } else {
        if (header[0]! > 4) return fail(N_NO_KEY);
        body = Buffer.from([this.keyVersions[header[0]!]!]);
      }
      return this.session ? this.respond(body, false) : Buffer.concat([body, Buffer.from([0x91, N_OK])]);
    }
    if (ins === 0x5f || ins === 0xc4) {
      // ChangeFileSettings / ChangeKey: FULL mode, authenticated only.
      const s = this.session;
      if (!s) return fail(N_AUTH);
      const header = data.subarray(0, 1);
      const plain = this.openCommand(ins, header, data.subarray(1), true);
      if (!plain) return fail(N_INTEGRITY);
      if (ins === 0x5f) {
        const file = [...this.files.values()].find((f) => f.id === header[0]);
        if (!file) return fail(N_NO_FILE);
        if (file.settings.change !== s.keyNo && file.settings.change !== 0xe) return fail(N_PERMISSION);
        const parsed = decodeSettings(plain, file.data.length);
        if (!parsed) return fail(N_PARAMETER);
        file.settings = parsed;
        return this.respond(Buffer.alloc(0), true);
      }
      const keyNo = header[0]! & 0x0f;
      if (keyNo > 4) return fail(N_NO_KEY);
      if (s.keyNo !== 0) return fail(N_PERMISSION); // the application's ChangeKey key is key 0
      if (keyNo === s.keyNo) {
        if (plain.length !== 17) return fail(N_LENGTH);
        this.keys[keyNo] = Buffer.from(plain.subarray(0, 16));
        this.keyVersions[keyNo] = plain[16]!;
        this.session = null; // the key of the running authentication changed: no MAC, re-authenticate
        return Buffer.from([0x91, N_OK]);
      }
      if (plain.length !== 21) return fail(N_LENGTH);
      const next = Buffer.alloc(16);
      for (let i = 0; i < 16; i++) next[i] = plain[i]! ^ this.keys[keyNo]![i]!;
      if (!crc32nk(next).equals(plain.subarray(17, 21))) return fail(N_INTEGRITY);
      this.keys[keyNo] = next;
      this.keyVersions[keyNo] = plain[16]!;
      return this.respond(Buffer.alloc(0), true);
    }
    return fail(0x1c); // ILLEGAL_COMMAND_CODE
  }

  /** Checks the command MAC (and decrypts a FULL-mode body); null when the MAC is wrong or the padding broken. */
  private openCommand(ins: number, header: Buffer, rest: Buffer, full: boolean): Buffer | null {
    const s = this.session!;
    if (rest.length < 8) return null;
    const body = rest.subarray(0, -8);
    const ctr = Buffer.alloc(2);
    ctr.writeUInt16LE(s.ctr);
    const want = truncate(cmac(s.mac, Buffer.concat([Buffer.from([ins]), ctr, s.ti, header, body])));
    if (!want.equals(rest.subarray(-8))) return null;
    if (!full) return body;
    if (body.length === 0 || body.length % 16 !== 0) return null;
    return unpad(cbcDecrypt(s.enc, ev2Iv(s.enc, 'command', s.ti, s.ctr), body));
  }

  /** The response of a successful secured command: CmdCtr advances, data (encrypted in FULL mode) + MAC. */
  private respond(body: Buffer, full: boolean): Buffer {
    const s = this.session!;
    s.ctr = (s.ctr + 1) & 0xffff;
    const data = full && body.length > 0 ? cbcEncrypt(s.enc, ev2Iv(s.enc, 'response', s.ti, s.ctr), pad(body)) : body;
    const ctr = Buffer.alloc(2);
    ctr.writeUInt16LE(s.ctr);
    const mac = truncate(cmac(s.mac, Buffer.concat([Buffer.from([N_OK]), ctr, s.ti, data])));
    return Buffer.concat([data, mac, Buffer.from([0x91, N_OK])]);
  }
}

function offset3(n: number): Buffer {
  const b = Buffer.alloc(3);
  b.writeUIntLE(n, 0, 3);
  return b;
}

/** GetFileSettings' answer: FileType, FileOption, AccessRights, FileSize, then the SDM part. */
export function encodeSettings(file: CardFile): Buffer {
  const s = file.settings;
  const parts = [
    Buffer.from([0x00, s.commMode | (s.sdm ? 0x40 : 0), (s.readWrite << 4) | s.change, (s.read << 4) | s.write]),
    offset3(file.data.length),
  ];
  const sdm = s.sdm;
  if (sdm) {
    parts.push(Buffer.from([sdm.options, 0xf0 | sdm.ctrRet, (sdm.metaRead << 4) | sdm.fileRead]));
    if (sdm.metaRead === 0xe && sdm.options & 0x80) parts.push(offset3(sdm.uidOffset!));
    if (sdm.metaRead === 0xe && sdm.options & 0x40) parts.push(offset3(sdm.ctrOffset!));
    if (sdm.metaRead <= 4) parts.push(offset3(sdm.piccOffset!));
    if (sdm.fileRead <= 4) parts.push(offset3(sdm.macInputOffset!), offset3(sdm.macOffset!));
  }
  return Buffer.concat(parts);
}

/** ChangeFileSettings' body (datasheet §10.7.1), checked the way the tag does; null = parameter error. */
function decodeSettings(b: Buffer, fileSize: number): FileSettings | null {
  if (b.length < 3) return null;
  const option = b[0]!;
  const settings: FileSettings = { commMode: option & 0x03, readWrite: b[1]! >> 4, change: b[1]! & 0x0f, read: b[2]! >> 4, write: b[2]! & 0x0f, sdm: null };
  if (!(option & 0x40)) return b.length === 3 ? settings : null;
  if (b.length < 6) return null;
  const sdm: SdmSettings = { options: b[3]!, ctrRet: b[4]! & 0x0f, metaRead: b[5]! >> 4, fileRead: b[5]! & 0x0f };
  if (sdm.options & 0x30) return null; // encrypted file data and the read counter limit are not modelled
  let at = 6;
  const take = (): number | null => {
    if (at + 3 > b.length) return null;
    const v = b.readUIntLE(at, 3);
    at += 3;
    return v;
  };
  const fields: Array<[keyof SdmSettings, boolean, number]> = [
    ['uidOffset', sdm.metaRead === 0xe && (sdm.options & 0x80) !== 0, 14],
    ['ctrOffset', sdm.metaRead === 0xe && (sdm.options & 0x40) !== 0, 6],
    ['piccOffset', sdm.metaRead <= 4, 32],
    ['macInputOffset', sdm.fileRead <= 4, 0],
    ['macOffset', sdm.fileRead <= 4, 16],
  ];
  for (const [name, present, width] of fields) {
    if (!present) continue;
    const v = take();
    if (v === null || v + width > fileSize) return null;
    (sdm as unknown as Record<string, number>)[name] = v;
  }
  if (at !== b.length) return null;
  if (sdm.fileRead <= 4 && sdm.macInputOffset! > sdm.macOffset!) return null;
  settings.sdm = sdm;
  return settings;
}
