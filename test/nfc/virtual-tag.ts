/**
 * A virtual NFC Forum Type 2 tag (NTAG213/215/216, MIFARE Ultralight family) that plugs into
 * vsmartcard's vpcd reader driver, so the real PC/SC stack (pcscd + libpcsclite + nfc-pcsc)
 * sees it as a contactless storage card on a PC/SC reader.
 *
 * The vpcd wire protocol is vpcd-card.ts's. Memory survives removal.
 *
 * Faults for tests: pulled mid-write (`pullAfter(n)`), read-only (CC access byte + lock bits),
 * locked pages only, a custom (too small) capacity, an unsupported ATR (MIFARE Classic, ISO-DEP).
 *
 * NTAG21x features (datasheet NTAG213/215/216 §8.5-8.11): the configuration pages after the
 * dynamic lock bytes (CFG0: MIRROR, RFUI, MIRROR_PAGE, AUTH0; CFG1: ACCESS; PWD; PACK), the UID
 * and NFC counter ASCII mirror applied to READ answers, the 24-bit NFC counter that advances at
 * the first READ after power-on when NFC_CNT_EN is set, AUTH0/PROT enforcement, and the native
 * PWD_AUTH (1B) and READ_CNT (39) commands through the ACR122-style pass-through
 * `FF 00 00 00 Lc D4 42 <command>` (answer `D5 43 <status> <data> 90 00`, status 00 = ACK).
 */
import { type CardAnswer, VpcdCard } from './vpcd-card.ts';

export type TagModel = 'NTAG213' | 'NTAG215' | 'NTAG216' | 'ULTRALIGHT';

interface ModelInfo {
  /** Total pages of 4 bytes, configuration pages included. */
  pages: number;
  /** CC byte 2: data area size / 8. */
  ccSize: number;
  /** Last user page (inclusive). */
  lastUserPage: number;
  /** Page of the dynamic lock bytes, if any. */
  dynamicLockPage: number | null;
}

/** NTAG21x configuration pages: CFG0 right after the dynamic lock bytes, then CFG1, PWD, PACK. */
function configPage(info: ModelInfo): number | null {
  return info.dynamicLockPage === null ? null : info.dynamicLockPage + 1;
}

export const MODELS: Record<TagModel, ModelInfo> = {
  NTAG213: { pages: 45, ccSize: 0x12, lastUserPage: 0x27, dynamicLockPage: 0x28 },
  NTAG215: { pages: 135, ccSize: 0x3e, lastUserPage: 0x81, dynamicLockPage: 0x82 },
  NTAG216: { pages: 231, ccSize: 0x6d, lastUserPage: 0xe1, dynamicLockPage: 0xe2 },
  ULTRALIGHT: { pages: 16, ccSize: 0x06, lastUserPage: 0x0f, dynamicLockPage: null },
};

/** ATR a PC/SC reader reports for an ISO 14443-3 Type A storage card named "Mifare Ultralight". */
export const ATR_ULTRALIGHT = Buffer.from('3B8F8001804F0CA0000003060300030000000068', 'hex');
/** ATR of a MIFARE Classic 1K (card name 00 01): not a Type 2 tag. */
export const ATR_MIFARE_CLASSIC_1K = Buffer.from('3B8F8001804F0CA000000306030001000000006A', 'hex');
/** ATR of an ISO 14443-4 (ISO-DEP) card or phone in card emulation: no storage-card bytes. */
export const ATR_ISO_DEP = Buffer.from('3B8080010101', 'hex');

export interface VirtualTagOptions {
  model?: TagModel;
  /** 7-byte UID; random when omitted. */
  uid?: Buffer;
  atr?: Buffer;
  /** CC byte 2 override (data area / 8), e.g. to make a tag too small. */
  ccSize?: number;
  /** CC access byte 0x0F and every lock bit set: a permanently locked tag. */
  readOnly?: boolean;
  /** Lock bits set but the CC still says read/write (writes fail with 63 00). */
  lockedPages?: boolean;
  /** Leave the tag blank (no CC) instead of factory-formatted with an empty NDEF TLV. */
  blank?: boolean;
  /** Fault: answer 90 00 to writes of the lock bytes (page 2) and the CC (page 3) but change nothing, as some clones do. */
  ignoresLocks?: boolean;
  /** Start value of the NFC counter (24 bits). */
  counter?: number;
}

function randomUid(): Buffer {
  const uid = Buffer.alloc(7);
  uid[0] = 0x04; // NXP
  for (let i = 1; i < 7; i++) uid[i] = Math.floor(Math.random() * 256);
  return uid;
}

const SW_OK = Buffer.from([0x90, 0x00]);
const SW_FAIL = Buffer.from([0x63, 0x00]);
const SW_WRONG_P1P2 = Buffer.from([0x6a, 0x82]);
const SW_NOT_SUPPORTED = Buffer.from([0x6a, 0x81]);
const SW_WRONG_LENGTH = Buffer.from([0x67, 0x00]);

export class VirtualTag extends VpcdCard {
  readonly model: TagModel;
  readonly info: ModelInfo;
  readonly uid: Buffer;
  readonly atr: Buffer;
  readonly memory: Buffer;
  /** Inject: drop off the reader instead of answering the write after this many more writes. */
  private pullAtWrite: number | null = null;
  /** Inject: drop off the reader at the first read once this many writes were made (a verify read). */
  private pullAtReadAfter: number | null = null;
  /** Counters since construction (for tests and the benchmark). */
  readonly stats = { apdus: 0, reads: 0, writes: 0, presentations: 0 };
  /** Every UPDATE BINARY page written, in order (all presentations). */
  readonly writeLog: number[] = [];
  private writesThisPresentation = 0;
  private holdAtWrite: number | null = null;
  private holding: { reply: Buffer | null; reached: () => void } | null = null;
  private readonly ignoresLocks: boolean;
  /** The NTAG21x NFC counter (24 bits, one-way). */
  counter: number;
  /** Has the counter advanced since this power-on (it does at the first READ only)? */
  private countedThisPowerOn = false;
  /** PWD_AUTH succeeded since this power-on. */
  private authenticated = false;
  /** Failed PWD_AUTH attempts (AUTHLIM counts them on a real tag). */
  readonly failedAuths: Buffer[] = [];

  constructor(options: VirtualTagOptions = {}) {
    super();
    this.model = options.model ?? 'NTAG213';
    this.ignoresLocks = options.ignoresLocks === true;
    this.info = MODELS[this.model];
    this.uid = options.uid ?? randomUid();
    if (this.uid.length !== 7) throw new Error('a Type 2 tag UID has 7 bytes');
    this.atr = options.atr ?? ATR_ULTRALIGHT;
    this.memory = Buffer.alloc(this.info.pages * 4);
    const u = this.uid;
    const bcc0 = 0x88 ^ u[0]! ^ u[1]! ^ u[2]!;
    const bcc1 = u[3]! ^ u[4]! ^ u[5]! ^ u[6]!;
    Buffer.from([u[0]!, u[1]!, u[2]!, bcc0, u[3]!, u[4]!, u[5]!, u[6]!, bcc1, 0x48, 0, 0]).copy(this.memory, 0);
    if (!options.blank) {
      Buffer.from([0xe1, 0x10, options.ccSize ?? this.info.ccSize, 0x00]).copy(this.memory, 12);
      Buffer.from([0x03, 0x00, 0xfe, 0x00]).copy(this.memory, 16); // factory: empty NDEF TLV
    }
    this.counter = options.counter ?? 0;
    const cfg = configPage(this.info);
    if (cfg !== null) {
      // Factory configuration: no mirror (STRG_MOD_EN set), AUTH0 FF (no protection), counter off, PWD FFFFFFFF.
      Buffer.from([0x04, 0x00, 0x00, 0xff, 0x00, 0x05, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00]).copy(this.memory, cfg * 4);
    }
    if (options.readOnly || options.lockedPages) this.setAllLockBits();
    if (options.readOnly) this.memory[15] = 0x0f;
  }

  /** Fault: let `writes` more page writes succeed, then leave the reader (socket closed, no reply). */
  pullAfter(writes: number): void {
    this.pullAtWrite = this.writesThisPresentation + writes;
  }

  /** Fault: let `writes` more page writes succeed, then leave the reader at the next read (the verify read). */
  pullAtRead(writes: number): void {
    this.pullAtReadAfter = this.writesThisPresentation + writes;
  }

  /** Put an NDEF message on the tag as another program would have (a TLV at page 4, then the terminator). */
  holdNdef(message: Buffer): void {
    const tlv = Buffer.concat([Buffer.from([0x03, message.length]), message, Buffer.from([0xfe])]);
    tlv.copy(this.memory, 16);
  }

  /**
   * Fault: after `writes` more page writes, apply the next one but hold its reply (the reader
   * waits, as if the tag were slow) until `release()`. Resolves when that write arrives.
   */
  holdAfter(writes: number): Promise<void> {
    this.holdAtWrite = this.writesThisPresentation + writes;
    return new Promise((resolve) => {
      this.holding = { reply: null, reached: resolve };
    });
  }

  private setAllLockBits(): void {
    this.memory[10] = 0xff;
    this.memory[11] = 0xff;
    if (this.info.dynamicLockPage !== null) {
      const at = this.info.dynamicLockPage * 4;
      this.memory[at] = 0xff;
      this.memory[at + 1] = 0xff;
      this.memory[at + 2] = 0xff;
    }
  }

  /** Is `page` write-protected by a static or dynamic lock bit? */
  private pageLocked(page: number): boolean {
    const l0 = this.memory[10]!;
    const l1 = this.memory[11]!;
    if (page === 3) return (l0 & 0x08) !== 0;
    if (page >= 4 && page <= 7) return (l0 & (1 << page)) !== 0;
    if (page >= 8 && page <= 15) return (l1 & (1 << (page - 8))) !== 0;
    if (this.info.dynamicLockPage !== null && page >= 16 && page <= this.info.lastUserPage) {
      // One dynamic lock bit per 2 pages for this model (simplified NTAG21x granularity).
      const bit = Math.floor((page - 16) / 2);
      const at = this.info.dynamicLockPage * 4 + Math.floor(bit / 8);
      return (this.memory[at]! & (1 << (bit % 8))) !== 0;
    }
    return false;
  }

  protected presented(): void {
    if (this.pullAtWrite !== null) this.pullAtWrite -= this.writesThisPresentation;
    if (this.pullAtReadAfter !== null) this.pullAtReadAfter -= this.writesThisPresentation;
    this.writesThisPresentation = 0;
    this.stats.presentations++;
  }

  protected answer(cmd: Buffer): CardAnswer {
    const writesBefore = this.writesThisPresentation;
    const reply = this.apdu(cmd);
    if (reply && this.holding && this.holdAtWrite !== null && writesBefore >= this.holdAtWrite && this.writesThisPresentation > writesBefore) {
      this.holdAtWrite = null;
      const { reached } = this.holding;
      this.holding = null;
      const held = this.hold(reply);
      reached();
      return held;
    }
    return reply;
  }

  private isType2(): boolean {
    return this.atr.equals(ATR_ULTRALIGHT);
  }

  /** Answers one command APDU; null means the tag dropped off the reader instead. */
  apdu(cmd: Buffer): Buffer | null {
    this.stats.apdus++;
    if (cmd[0] !== 0xff) return SW_NOT_SUPPORTED;
    const ins = cmd[1];
    if (ins === 0xca && cmd[2] === 0x00) return Buffer.concat([this.uid, SW_OK]); // GET UID
    if (!this.isType2()) return SW_FAIL; // a Classic needs authentication; ISO-DEP has no pages
    if (ins === 0xb0) {
      if (this.pullAtReadAfter !== null && this.writesThisPresentation > 0 && this.writesThisPresentation >= this.pullAtReadAfter) {
        this.pullAtReadAfter = null;
        return null;
      }
      this.stats.reads++;
      const page = cmd[3]!;
      const le = cmd.length > 4 ? cmd[4]! || 256 : 256;
      if (page >= this.info.pages) return SW_WRONG_P1P2;
      if (le > 16) return SW_WRONG_LENGTH;
      if (this.readProtected(page)) return SW_FAIL;
      this.countRead();
      const view = this.readView();
      const out = Buffer.alloc(le);
      for (let i = 0; i < le; i++) out[i] = view[(page * 4 + i) % view.length]!; // NTAG rolls over
      return Buffer.concat([out, SW_OK]);
    }
    if (ins === 0xd6) {
      const page = cmd[3]!;
      if (cmd[4] !== 4 || cmd.length < 9) return SW_WRONG_LENGTH;
      if (this.pullAtWrite !== null && this.writesThisPresentation >= this.pullAtWrite) {
        this.pullAtWrite = null;
        return null;
      }
      const data = cmd.subarray(5, 9);
      const cfg = configPage(this.info);
      const lastWritable = cfg !== null ? cfg + 3 : this.info.lastUserPage;
      if (page < 2 || page > lastWritable) return SW_FAIL;
      if (this.writeProtected(page)) return SW_FAIL; // NAK: PWD_AUTH first
      if (cfg !== null && page >= cfg) {
        data.copy(this.memory, page * 4); // configuration, PWD, PACK: plain pages
      } else if ((page === 2 || page === 3) && this.ignoresLocks) {
        // Fault: acknowledged, not applied.
      } else if (page === 2) {
        // Only the lock bytes are writable, and bits only get set.
        this.memory[10]! |= data[2]!;
        this.memory[11]! |= data[3]!;
      } else if (page === 3) {
        if (this.pageLocked(3)) return SW_FAIL;
        for (let i = 0; i < 4; i++) this.memory[12 + i]! |= data[i]!; // OTP: bits only get set
      } else if (page === this.info.dynamicLockPage) {
        for (let i = 0; i < 3; i++) this.memory[page * 4 + i]! |= data[i]!;
      } else {
        if (this.pageLocked(page)) return SW_FAIL;
        data.copy(this.memory, page * 4);
      }
      this.stats.writes++;
      this.writesThisPresentation++;
      this.writeLog.push(page);
      return SW_OK;
    }
    if (ins === 0x00 && cmd[2] === 0x00 && cmd[3] === 0x00 && cmd[5] === 0xd4 && cmd[6] === 0x42) {
      return this.native(cmd.subarray(7, 5 + cmd[4]!));
    }
    return SW_NOT_SUPPORTED;
  }

  /** A native NTAG command through the PN53x InCommunicateThru pass-through (status 01 = no answer / NAK). */
  private native(command: Buffer): Buffer {
    const answer = (data: Buffer | null) =>
      data ? Buffer.concat([Buffer.from([0xd5, 0x43, 0x00]), data, SW_OK]) : Buffer.from([0xd5, 0x43, 0x01, 0x90, 0x00]);
    const cfg = configPage(this.info);
    if (cfg === null) return answer(null);
    if (command[0] === 0x1b && command.length === 5) {
      // PWD_AUTH: answers PACK when the password matches, NAK otherwise.
      const pwd = this.memory.subarray((cfg + 2) * 4, (cfg + 3) * 4);
      if (!command.subarray(1, 5).equals(pwd)) {
        this.failedAuths.push(Buffer.from(command.subarray(1, 5)));
        return answer(null);
      }
      this.authenticated = true;
      return answer(Buffer.from(this.memory.subarray((cfg + 3) * 4, (cfg + 3) * 4 + 2)));
    }
    if (command[0] === 0x39 && command[1] === 0x02) {
      // READ_CNT: LSB first. NFC_CNT_PWD_PROT (ACCESS bit 3) needs PWD_AUTH first.
      if ((this.memory[(cfg + 1) * 4]! & 0x08) !== 0 && !this.authenticated) return answer(null);
      return answer(Buffer.from([this.counter & 0xff, (this.counter >> 8) & 0xff, (this.counter >> 16) & 0xff]));
    }
    return answer(null);
  }

  /** The tag enters the field again: the NFC counter may advance once more, PWD_AUTH is forgotten. */
  powerOn(): void {
    this.countedThisPowerOn = false;
    this.authenticated = false;
  }

  /** AUTH0 and PROT (ACCESS bit 7): pages from AUTH0 on need PWD_AUTH to be written (and read when PROT is set). */
  private protectedFrom(): number | null {
    const cfg = configPage(this.info);
    if (cfg === null || this.authenticated) return null;
    return this.memory[cfg * 4 + 3]!;
  }

  private writeProtected(page: number): boolean {
    const auth0 = this.protectedFrom();
    return auth0 !== null && page >= auth0;
  }

  private readProtected(page: number): boolean {
    const auth0 = this.protectedFrom();
    const cfg = configPage(this.info)!;
    return auth0 !== null && page >= auth0 && (this.memory[(cfg + 1) * 4]! & 0x80) !== 0;
  }

  /** NFC_CNT_EN (ACCESS bit 4): the counter advances at the first READ after power-on, up to FFFFFF. */
  private countRead(): void {
    const cfg = configPage(this.info);
    if (cfg === null || this.countedThisPowerOn) return;
    this.countedThisPowerOn = true;
    if ((this.memory[(cfg + 1) * 4]! & 0x10) !== 0 && this.counter < 0xffffff) this.counter++;
  }

  /** What READ returns: memory with the ASCII mirror applied, PWD and PACK as zeros. */
  private readView(): Buffer {
    const cfg = configPage(this.info);
    if (cfg === null) return this.memory;
    const view = Buffer.from(this.memory);
    view.fill(0, (cfg + 2) * 4, (cfg + 4) * 4);
    const mirrorByte = this.memory[cfg * 4]!;
    const conf = mirrorByte >> 6;
    const mirrorPage = this.memory[cfg * 4 + 2]!;
    if (conf === 0 || mirrorPage < 4) return view;
    const hex = (b: Buffer) => b.toString('hex').toUpperCase();
    const counter = Buffer.from([(this.counter >> 16) & 0xff, (this.counter >> 8) & 0xff, this.counter & 0xff]);
    const counterOn = (this.memory[(cfg + 1) * 4]! & 0x10) !== 0;
    // The counter mirror shows 000000 while NFC_CNT_EN is off.
    const counterText = hex(counterOn ? counter : Buffer.alloc(3));
    const text = conf === 1 ? hex(this.uid) : conf === 2 ? counterText : `${hex(this.uid)}x${counterText}`;
    const at = mirrorPage * 4 + ((mirrorByte >> 4) & 0x03);
    if (at + text.length > (this.info.lastUserPage + 1) * 4) return view; // does not fit: no mirror
    view.write(text, at, 'latin1');
    return view;
  }

  /**
   * A phone taps the tag (outside PC/SC): power-on, then the NDEF read as a phone does it, with
   * the mirror applied and the counter advanced. Returns the NDEF message the phone gets.
   */
  phoneTap(): Buffer | null {
    this.powerOn();
    this.countRead();
    return this.ndefMessage(this.readView());
  }

  /** The value of the first NDEF Message TLV in the data area, or null if none / malformed. */
  ndefMessage(memory: Buffer = this.memory): Buffer | null {
    let at = 16;
    const end = 16 + memory[14]! * 8;
    while (at < end) {
      const t = memory[at]!;
      if (t === 0x00) {
        at++;
        continue;
      }
      if (t === 0xfe) return null;
      let len = memory[at + 1]!;
      let head = 2;
      if (len === 0xff) {
        len = memory.readUInt16BE(at + 2);
        head = 4;
      }
      if (t === 0x03) return Buffer.from(memory.subarray(at + head, at + head + len));
      at += head + len;
    }
    return null;
  }
}
