/**
 * The card side of vsmartcard's vpcd protocol, shared by the virtual tags (virtual-tag.ts,
 * virtual-ntag424.ts): a card is a TCP (or unix socket) client of vpcd.
 *
 * Wire protocol: every message is a 2-byte big-endian length then the payload. A 1-byte payload
 * is a control byte (00 power off, 01 power on, 02 reset, 04 get ATR: reply with the ATR);
 * anything longer is a command APDU: reply with data + SW1 SW2. Connecting is "card inserted",
 * closing the socket is "card removed". What a card stores survives removal.
 */
import net from 'node:net';

/** Where a virtual card connects: vpcd's TCP port, or a unix socket forwarded to it. */
export type CardEndpoint = { host: string; port: number } | { path: string };

/** A card's answer to one command: the reply, `null` when it left the reader instead (a fault), or 'held' (see `hold`). */
export type CardAnswer = Buffer | null | 'held';

export abstract class VpcdCard {
  abstract readonly atr: Buffer;
  private socket: net.Socket | null = null;
  private pending = Buffer.alloc(0);
  private heldReply: Buffer | null = null;
  private closedWaiters: Array<() => void> = [];

  /** Answers one command APDU that came over the wire. */
  protected abstract answer(cmd: Buffer): CardAnswer;
  /** A field reset: what is volatile on the card (selection, authentication, the tap) is lost. */
  protected abstract powerOn(): void;
  /** A new presentation begins (before the card connects). */
  protected abstract presented(): void;

  get present(): boolean {
    return this.socket !== null;
  }

  /** Present the card to a reader (connect to vpcd). Resolves once connected. */
  insert(endpoint: CardEndpoint): Promise<void> {
    if (this.socket) throw new Error('tag already on a reader');
    this.pending = Buffer.alloc(0);
    this.presented();
    this.powerOn();
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
        for (const w of this.closedWaiters.splice(0)) w();
      });
    });
  }

  /** Take the card off the reader (close the socket). */
  remove(): Promise<void> {
    const socket = this.socket;
    if (!socket) return Promise.resolve();
    return new Promise((resolve) => {
      this.closedWaiters.push(resolve);
      socket.destroy();
    });
  }

  /** Resolves when the card leaves the reader (removed by the test or pulled by a fault). */
  whenRemoved(): Promise<void> {
    if (!this.socket) return Promise.resolve();
    return new Promise((resolve) => this.closedWaiters.push(resolve));
  }

  /** Send the reply kept back by `hold`. */
  release(): void {
    const reply = this.heldReply;
    this.heldReply = null;
    if (reply) this.send(reply);
  }

  /** Fault: the command was applied but its reply is kept back until `release()` (the reader waits, as for a slow card). */
  protected hold(reply: Buffer): 'held' {
    this.heldReply = reply;
    return 'held';
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
      const msg = Buffer.from(this.pending.subarray(2, 2 + len));
      this.pending = this.pending.subarray(2 + len);
      if (len === 1) {
        // 00 power off, 01 power on, 02 reset: no reply.
        if (msg[0] === 0x04) this.send(this.atr);
        else if (msg[0] === 0x01 || msg[0] === 0x02) this.powerOn();
        continue;
      }
      const reply = this.answer(msg);
      if (reply === 'held') return;
      if (reply === null) {
        // The card left the reader instead of answering.
        this.socket?.destroy();
        this.socket = null;
        return;
      }
      this.send(reply);
    }
  }
}
