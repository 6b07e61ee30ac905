/**
 * Talking to an NTAG 424 DNA: native commands wrapped in ISO 7816-4 (CLA 90, status 91 xx),
 * AuthenticateEV2First with an AES-128 key and EV2 secure messaging (datasheet NT4H2421Gx
 * §9.1: session keys from SV1/SV2, the command counter, MAC and FULL modes). The CMAC and MAC
 * truncation are the ntag424 crypto module's; this file only frames commands with them.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import zlib from 'node:zlib';
import { aesCmac, truncateMac } from './ntag424/index.ts';
import { type ApduCounter, NfcError, send, type Transmit } from './program.ts';

export const NATIVE_OK = 0x00;
export const NATIVE_MORE = 0xaf;
export const NATIVE_AUTH_ERROR = 0xae;
export const NATIVE_INTEGRITY_ERROR = 0x1e;

export interface NativeReply {
  /** SW2 of the 91 xx status word. */
  status: number;
  data: Buffer;
}

/** An authenticated EV2 session: which key, the session keys, the transaction id, the command counter. */
export interface Ev2Session {
  keyNo: number;
  enc: Buffer;
  mac: Buffer;
  ti: Buffer;
  ctr: number;
}

const ZERO_IV = Buffer.alloc(16);

function aesCbc(decrypt: boolean, key: Buffer, iv: Buffer, data: Buffer): Buffer {
  const c = decrypt ? createDecipheriv('aes-128-cbc', key, iv) : createCipheriv('aes-128-cbc', key, iv);
  c.setAutoPadding(false);
  return Buffer.concat([c.update(data), c.final()]);
}

export class Ntag424Io {
  readonly tx: Transmit;
  readonly counter: ApduCounter;

  constructor(tx: Transmit, counter: ApduCounter) {
    this.tx = tx;
    this.counter = counter;
  }

  /** An ISO 7816-4 command; returns data and SW1SW2. */
  async iso(apdu: Buffer, maxResponse = 2): Promise<{ sw: number; data: Buffer }> {
    const r = await send(this.tx, apdu, maxResponse, this.counter);
    return { sw: r.readUInt16BE(r.length - 2), data: r.subarray(0, -2) };
  }

  /** A native command: 90 INS 00 00 Lc data 00. A status word other than 91 xx is an I/O error. */
  async native(ins: number, data: Buffer = Buffer.alloc(0)): Promise<NativeReply> {
    const apdu = Buffer.concat([Buffer.from([0x90, ins, 0x00, 0x00]), data.length > 0 ? Buffer.from([data.length]) : Buffer.alloc(0), data, Buffer.from([0x00])]);
    const r = await send(this.tx, apdu, 258, this.counter);
    if (r[r.length - 2] !== 0x91) throw new NfcError('io_error', `The tag answered a native command with ${r.subarray(-2).toString('hex')}.`);
    return { status: r[r.length - 1]!, data: r.subarray(0, -2) };
  }

  /**
   * AuthenticateEV2First with `key` as key `keyNo`: null when the tag refuses it (another key is
   * set), the session otherwise. Two APDUs. `rndA` is random; the unit tests pass AN12196's.
   */
  async authenticate(keyNo: number, key: Buffer, rndA: Buffer = randomBytes(16)): Promise<Ev2Session | null> {
    const first = await this.native(0x71, Buffer.from([keyNo, 0x00]));
    if (first.status !== NATIVE_MORE || first.data.length !== 16) return null;
    const rndB = aesCbc(true, key, ZERO_IV, first.data);
    const second = await this.native(0xaf, aesCbc(false, key, ZERO_IV, Buffer.concat([rndA, rotateLeft(rndB)])));
    if (second.status !== NATIVE_OK || second.data.length !== 32) return null;
    const plain = aesCbc(true, key, ZERO_IV, second.data);
    // The tag proves it knows the key too: RndA rotated by one byte.
    if (!plain.subarray(4, 20).equals(rotateLeft(rndA))) throw new NfcError('io_error', 'The tag answered the authentication with a wrong proof.');
    const xored = Buffer.alloc(6);
    for (let i = 0; i < 6; i++) xored[i] = rndA[2 + i]! ^ rndB[i]!;
    const tail = Buffer.concat([rndA.subarray(0, 2), xored, rndB.subarray(6, 16), rndA.subarray(8, 16)]);
    return {
      keyNo,
      enc: aesCmac(key, Buffer.concat([Buffer.from([0xa5, 0x5a, 0x00, 0x01, 0x00, 0x80]), tail])),
      mac: aesCmac(key, Buffer.concat([Buffer.from([0x5a, 0xa5, 0x00, 0x01, 0x00, 0x80]), tail])),
      ti: Buffer.from(plain.subarray(0, 4)),
      ctr: 0,
    };
  }

  /**
   * A command in MAC (`full: false`) or FULL mode: the body encrypted in FULL mode, the command
   * MAC over INS || CmdCtr || TI || header || body, the response MAC checked, CmdCtr advanced.
   * `responseMac: false` for ChangeKey of the authenticated key (the tag ends the session instead).
   * Returns the status and the (decrypted) response data.
   */
  async secure(
    s: Ev2Session,
    ins: number,
    header: Buffer,
    body: Buffer,
    options: { full: boolean; responseMac?: boolean },
  ): Promise<NativeReply> {
    const sent = options.full && body.length > 0 ? aesCbc(false, s.enc, ivFor(s, 'command'), padM2(body)) : body;
    const mac = truncateMac(aesCmac(s.mac, Buffer.concat([Buffer.from([ins]), le16(s.ctr), s.ti, header, sent])));
    const reply = await this.native(ins, Buffer.concat([header, sent, mac]));
    if (reply.status !== NATIVE_OK) return reply;
    s.ctr = (s.ctr + 1) & 0xffff;
    if (options.responseMac === false) return reply;
    if (reply.data.length < 8) throw new NfcError('io_error', 'The tag answered a secured command without its MAC.');
    const data = reply.data.subarray(0, -8);
    const want = truncateMac(aesCmac(s.mac, Buffer.concat([Buffer.from([NATIVE_OK]), le16(s.ctr), s.ti, data])));
    if (!want.equals(reply.data.subarray(-8))) throw new NfcError('io_error', 'The tag answered with a wrong MAC (a reader or radio fault): present it again.');
    if (!options.full || data.length === 0) return { status: NATIVE_OK, data };
    return { status: NATIVE_OK, data: unpadM2(aesCbc(true, s.enc, ivFor(s, 'response'), data)) };
  }

  /**
   * ChangeKey (FULL mode) for `keyNo` while authenticated with key 0: the new key and version
   * for key 0 itself; for another key the new key XOR the old one, the version and the CRC32 of
   * the new key (the tag checks it, so a wrong `oldKey` is refused with an integrity error).
   */
  changeKey(s: Ev2Session, keyNo: number, newKey: Buffer, version: number, oldKey: Buffer): Promise<NativeReply> {
    if (keyNo === s.keyNo) {
      return this.secure(s, 0xc4, Buffer.from([keyNo]), Buffer.concat([newKey, Buffer.from([version])]), { full: true, responseMac: false });
    }
    const xored = Buffer.alloc(16);
    for (let i = 0; i < 16; i++) xored[i] = newKey[i]! ^ oldKey[i]!;
    return this.secure(s, 0xc4, Buffer.from([keyNo]), Buffer.concat([xored, Buffer.from([version]), crc32nk(newKey)]), { full: true });
  }
}

function ivFor(s: Ev2Session, direction: 'command' | 'response'): Buffer {
  const label = direction === 'command' ? [0xa5, 0x5a] : [0x5a, 0xa5];
  return aesCbc(false, s.enc, ZERO_IV, Buffer.concat([Buffer.from(label), s.ti, le16(s.ctr), Buffer.alloc(8)]));
}

function le16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n);
  return b;
}

function rotateLeft(b: Buffer): Buffer {
  return Buffer.concat([b.subarray(1), b.subarray(0, 1)]);
}

/** ISO/IEC 9797-1 method 2 as EV2 FULL mode uses it: 80 then zeros, always at least one byte. */
function padM2(data: Buffer): Buffer {
  const out = Buffer.alloc((Math.floor(data.length / 16) + 1) * 16);
  data.copy(out);
  out[data.length] = 0x80;
  return out;
}

function unpadM2(data: Buffer): Buffer {
  const end = data.lastIndexOf(0x80);
  return end >= 0 && data.subarray(end + 1).every((b) => b === 0) ? data.subarray(0, end) : data;
}

/** NXP's CRC32 for ChangeKey: the IEEE 802.3 CRC without its final inversion, little-endian. */
export function crc32nk(data: Buffer): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32LE(~zlib.crc32(data) >>> 0);
  return out;
}
