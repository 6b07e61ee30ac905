/**
 * A virtual NFC Forum Type 2 tag (NTAG213/215/216, MIFARE Ultralight family) that plugs into
 * vsmartcard's vpcd reader driver, so the real PC/SC stack (pcscd + libpcsclite + nfc-pcsc)
 * sees it as a contactless storage card on a PC/SC reader.
 *
 * vpcd wire protocol (card side): every message is a 2-byte big-endian length then the payload.
 * A 1-byte payload is a control byte (00 power off, 01 power on, 02 reset, 04 get ATR: reply
 * with the ATR); anything longer is a command APDU: reply with data + SW1 SW2. Closing the
 * socket is "card removed", connecting is "card inserted". Memory survives removal.
 *
 * Faults for tests: pulled mid-write (`pullAfter(n)`), read-only (CC access byte + lock bits),
 * locked pages only, a custom (too small) capacity, an unsupported ATR (MIFARE Classic, ISO-DEP).
 */
import net from 'node:net';

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

/** Where a virtual card connects: vpcd's TCP port, or a unix socket forwarded to it. */
export type CardEndpoint = { host: string; port: number } | { path: string };

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

export class VirtualTag {
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
  private socket: net.Socket | null = null;
  private writesThisPresentation = 0;
  private pending = Buffer.alloc(0);
  private holdAtWrite: number | null = null;
  private holding: { reply: Buffer | null; reached: () => void } | null = null;
  private heldReply: Buffer | null = null;
  private closedWaiters: Array<() => void> = [];
  private readonly ignoresLocks: boolean;

  constructor(options: VirtualTagOptions = {}) {
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

  /** Send the held reply. */
  release(): void {
    const reply = this.heldReply;
    this.heldReply = null;
    if (reply) this.send(reply);
  }

  get present(): boolean {
    return this.socket !== null;
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

  /** Present the tag to a reader (connect to vpcd). Resolves once connected. */
  insert(endpoint: CardEndpoint): Promise<void> {
    if (this.socket) throw new Error('tag already on a reader');
    if (this.pullAtWrite !== null) this.pullAtWrite -= this.writesThisPresentation;
    if (this.pullAtReadAfter !== null) this.pullAtReadAfter -= this.writesThisPresentation;
    this.writesThisPresentation = 0;
    this.pending = Buffer.alloc(0);
    this.stats.presentations++;
    return new Promise((resolve, reject) => {
      const socket = 'path' in endpoint ? net.connect(endpoint.path) : net.connect(endpoint.port, endpoint.host);
      socket.setNoDelay(true);
      socket.once('connect', () => {
        this.socket = socket;
        resolve();
      });
      socket.once('error', (err) => {
        if (!this.socket) reject(err);
      });
      socket.on('data', (chunk) => this.onData(chunk));
      socket.once('close', () => {
        if (this.socket === socket) this.socket = null;
        const waiters = this.closedWaiters;
        this.closedWaiters = [];
        for (const w of waiters) w();
      });
    });
  }

  /** Take the tag off the reader (close the socket). */
  remove(): Promise<void> {
    const socket = this.socket;
    if (!socket) return Promise.resolve();
    return new Promise((resolve) => {
      this.closedWaiters.push(resolve);
      socket.destroy();
    });
  }

  /** Resolves when the tag leaves the reader (removed by the test or pulled by a fault). */
  whenRemoved(): Promise<void> {
    if (!this.socket) return Promise.resolve();
    return new Promise((resolve) => this.closedWaiters.push(resolve));
  }

  private send(payload: Buffer): void {
    const header = Buffer.alloc(2);
    header.writeUInt16BE(payload.length);
    this.socket?.write(Buffer.concat([header, payload]));
  }

  private onData(chunk: Buffer): void {
    this.pending = Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= 2) {
      const len = this.pending.readUInt16BE(0);
      if (this.pending.length < 2 + len) return;
      const msg = this.pending.subarray(2, 2 + len);
      this.pending = this.pending.subarray(2 + len);
      if (len === 1) {
        if (msg[0] === 0x04) this.send(this.atr);
        // 00 power off, 01 power on, 02 reset: no reply.
      } else {
        const writesBefore = this.writesThisPresentation;
        const reply = this.apdu(Buffer.from(msg));
        if (reply && this.holding && this.holdAtWrite !== null && writesBefore >= this.holdAtWrite && this.writesThisPresentation > writesBefore) {
          this.heldReply = reply;
          this.holdAtWrite = null;
          const { reached } = this.holding;
          this.holding = null;
          reached();
          return;
        }
        if (reply) this.send(reply);
        if (!this.socket) return;
      }
    }
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
        this.socket?.destroy();
        this.socket = null;
        return null;
      }
      this.stats.reads++;
      const page = cmd[3]!;
      const le = cmd.length > 4 ? cmd[4]! || 256 : 256;
      if (page >= this.info.pages) return SW_WRONG_P1P2;
      if (le > 16) return SW_WRONG_LENGTH;
      const out = Buffer.alloc(le);
      for (let i = 0; i < le; i++) out[i] = this.memory[(page * 4 + i) % this.memory.length]!; // NTAG rolls over
      return Buffer.concat([out, SW_OK]);
    }
    if (ins === 0xd6) {
      const page = cmd[3]!;
      if (cmd[4] !== 4 || cmd.length < 9) return SW_WRONG_LENGTH;
      if (this.pullAtWrite !== null && this.writesThisPresentation >= this.pullAtWrite) {
        this.pullAtWrite = null;
        this.socket?.destroy();
        this.socket = null;
        return null;
      }
      const data = cmd.subarray(5, 9);
      if (page < 2 || page > (this.info.dynamicLockPage ?? this.info.lastUserPage)) return SW_FAIL;
      if ((page === 2 || page === 3) && this.ignoresLocks) {
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
    return SW_NOT_SUPPORTED;
  }

  /** The value of the first NDEF Message TLV in the data area, or null if none / malformed. */
  ndefMessage(): Buffer | null {
    let at = 16;
    const end = 16 + this.memory[14]! * 8;
    while (at < end) {
      const t = this.memory[at]!;
      if (t === 0x00) {
        at++;
        continue;
      }
      if (t === 0xfe) return null;
      let len = this.memory[at + 1]!;
      let head = 2;
      if (len === 0xff) {
        len = this.memory.readUInt16BE(at + 2);
        head = 4;
      }
      if (t === 0x03) return Buffer.from(this.memory.subarray(at + head, at + head + len));
      at += head + len;
    }
    return null;
  }
}
