/**
 * The API-process side of the NFC bridge: starts bridge-child.ts (the only place nfc-pcsc is
 * loaded) through a spawner (spawn.ts: a Node fork, or Electron's utilityProcess in the app), relays its state and tag events, and watches it. A child that stops sending
 * heartbeats (nfc-pcsc spinning with no pcscd, a hung native call), crashes, or exits because
 * pcscd went away is replaced; the API server never waits on PC/SC longer than a write timeout.
 */
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { advice, type ReaderAdvice } from './advice.ts';
import { NfcError, type WriteOptions, type WriteOutcome } from './program.ts';
import { EXIT_UNAVAILABLE, type CardOnReader, type FromChild, type Ntag424KeysHex, type ReaderState, type ToChild } from './protocol.ts';
import { type BridgeChild, forkBridgeChild, type SpawnBridgeChild } from './spawn.ts';

export interface BridgeStatus {
  state: ReaderState;
  /** Plain words for the field screens (no module names or paths: those go to the log). */
  message: string;
  /** What to do about it; null when nothing needs doing. */
  fix: string | null;
  readers: string[];
  cards: CardOnReader[];
  /** Children started so far (1 + restarts). */
  generation: number;
}

export interface WriteRequest extends Pick<WriteOptions, 'mirror' | 'protect' | 'password' | 'newPassword' | 'configured'> {
  url: string;
  lock?: boolean;
  /** Only read the tag back and compare with `url` (it already holds it): nothing is written. */
  verifyOnly?: boolean;
  reader?: string;
  /** Only write if the tag on the reader still has this UID (the one checked before writing). */
  expectUid?: string;
  /** An NTAG 424 DNA is personalised with these per-tag keys (hex, keys 0..4) and key version (re-keyed from `previous`). */
  ntag424?: Ntag424KeysHex;
}

/** What the NFC domain needs from a reader bridge; the real one is NfcBridge, tests may fake it. */
export interface NfcDevice {
  status(): BridgeStatus;
  write(request: WriteRequest): Promise<WriteOutcome>;
  /** Reader LED/buzzer feedback (ACR122); best effort. */
  feedback(reader: string, ok: boolean): void;
  on(event: 'status', listener: (status: BridgeStatus) => void): this;
  on(event: 'card', listener: (card: CardOnReader) => void): this;
  on(event: 'card.off', listener: (e: { reader: string; uid: string | null }) => void): this;
  once(event: 'card', listener: (card: CardOnReader) => void): this;
  once(event: 'card.off', listener: (e: { reader: string; uid: string | null }) => void): this;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  off(event: string, listener: (...args: any[]) => void): this;
}

export interface NfcBridgeOptions {
  /** Environment of the child (e.g. PCSCLITE_CSOCK_NAME); defaults to this process's. */
  env?: NodeJS.ProcessEnv;
  /** Kill the child when silent this long (ms). */
  heartbeatTimeoutMs?: number;
  /** Give up on a write after this long (ms): the child is restarted. */
  writeTimeoutMs?: number;
  /** Delay before starting a new child (ms). */
  restartDelayMs?: number;
  log?: (message: string) => void;
  /** Child script: default bridge-child.ts beside this file; the desktop app's bundled one. */
  script?: string;
  /** Starts the child: default child_process.fork on this Node; the desktop app a utilityProcess. */
  spawn?: SpawnBridgeChild;
}

interface Pending {
  resolve: (o: WriteOutcome) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

export class NfcBridge extends EventEmitter implements NfcDevice {
  private readonly options: Required<Omit<NfcBridgeOptions, 'env' | 'log'>> & Pick<NfcBridgeOptions, 'env' | 'log'>;
  private child: BridgeChild | null = null;
  private current: BridgeStatus = { state: 'starting', ...advice.starting, readers: [], cards: [], generation: 0 };
  private lastSeen = 0;
  private watchdog: NodeJS.Timeout | null = null;
  private restartTimer: NodeJS.Timeout | null = null;
  private stopped = true;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** Children whose exit was reported (stop() waits for the exit of one that has not). */
  private readonly exited = new WeakSet<BridgeChild>();

  constructor(options: NfcBridgeOptions = {}) {
    super();
    this.options = {
      heartbeatTimeoutMs: options.heartbeatTimeoutMs ?? 3000,
      writeTimeoutMs: options.writeTimeoutMs ?? 10_000,
      restartDelayMs: options.restartDelayMs ?? 500,
      script: options.script ?? join(import.meta.dirname, 'bridge-child.ts'),
      env: options.env,
      log: options.log,
      spawn: options.spawn ?? forkBridgeChild(),
    };
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.spawnChild();
    this.watchdog = setInterval(() => this.checkHeartbeat(), 500);
    this.watchdog.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.watchdog) clearInterval(this.watchdog);
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.watchdog = this.restartTimer = null;
    const child = this.child;
    this.child = null;
    this.failPending(new NfcError('no_reader', 'NFC bridge stopped.'));
    if (child && !this.exited.has(child)) {
      const exited = new Promise<void>((resolve) => child.onExit(() => resolve()));
      child.kill();
      await exited;
    }
  }

  status(): BridgeStatus {
    return { ...this.current, readers: [...this.current.readers], cards: [...this.current.cards] };
  }

  write(request: WriteRequest): Promise<WriteOutcome> {
    const child = this.child;
    const s = this.current.state;
    if (s === 'unavailable') return Promise.reject(new NfcError('unavailable', this.current.message));
    if (s === 'no_daemon') return Promise.reject(new NfcError('no_daemon', this.current.message));
    if (!child || !child.alive || s === 'starting') {
      return Promise.reject(new NfcError('busy', 'The NFC bridge is (re)starting: try again in a moment.'));
    }
    if (s === 'no_reader') return Promise.reject(new NfcError('no_reader', this.current.message));
    const id = this.nextId++;
    return new Promise<WriteOutcome>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new NfcError('io_error', 'The reader stopped responding during the write; the NFC bridge is restarting. Present the tag again.'));
        this.restart('write timed out');
      }, this.options.writeTimeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.send({
        type: 'write',
        id,
        url: request.url,
        lock: request.lock === true,
        verifyOnly: request.verifyOnly === true,
        mirror: request.mirror,
        protect: request.protect,
        password: request.password,
        newPassword: request.newPassword,
        configured: request.configured,
        reader: request.reader,
        expectUid: request.expectUid,
        ntag424: request.ntag424,
      });
    });
  }

  feedback(reader: string, ok: boolean): void {
    this.send({ type: 'feedback', reader, ok });
  }

  /** Kill the child now and start a new one (watchdog, tests). */
  restart(reason: string): void {
    this.options.log?.(`NFC bridge: restarting the PC/SC child (${reason})`);
    this.child?.kill();
  }

  private send(msg: ToChild): void {
    this.child?.send(msg);
  }

  private spawnChild(): void {
    this.restartTimer = null;
    if (this.stopped) return;
    const child = this.options.spawn({ script: this.options.script, env: this.options.env ?? process.env });
    this.child = child;
    this.lastSeen = Date.now();
    this.current.generation++;
    let stderr = '';
    child.onStderr((text) => {
      stderr = (stderr + text).slice(-2000);
    });
    child.onMessage((msg) => {
      if (this.child !== child) return;
      this.lastSeen = Date.now();
      this.onMessage(msg);
    });
    child.onExit((code, signal) => {
      this.exited.add(child);
      if (this.child === child) this.child = null;
      this.failPending(new NfcError('tag_removed', 'The NFC reader connection was reset during the write: present the tag again.'));
      if (this.stopped) return;
      if (code === EXIT_UNAVAILABLE) {
        if (this.current.state !== 'unavailable') this.setStatus('unavailable', advice.notInstalled, []);
        this.emit('child.exit', { code, restarting: false });
        return;
      }
      if (code !== 0 && code !== 4) this.options.log?.(`NFC bridge child exited (${signal ?? code}) ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
      if (this.current.cards.length > 0) {
        for (const card of this.current.cards) this.emit('card.off', { reader: card.reader, uid: card.info.uid });
      }
      const keep: ReaderAdvice = this.current.state === 'no_daemon' ? { message: this.current.message, fix: this.current.fix } : advice.restarting;
      this.setStatus(this.current.state === 'no_daemon' ? 'no_daemon' : 'starting', keep, []);
      this.restartTimer = setTimeout(() => this.spawnChild(), this.options.restartDelayMs);
      this.restartTimer.unref();
      this.emit('child.exit', { code: code ?? signal, restarting: true });
    });
  }

  private checkHeartbeat(): void {
    if (!this.child || this.stopped) return;
    if (Date.now() - this.lastSeen > this.options.heartbeatTimeoutMs) {
      this.lastSeen = Date.now();
      this.restart('no heartbeat: PC/SC stalled');
    }
  }

  private setStatus(state: ReaderState, said: ReaderAdvice, readers: string[]): void {
    if (state !== 'card_present') this.current.cards = [];
    this.current = { ...this.current, state, message: said.message, fix: said.fix, readers };
    this.emit('status', this.status());
  }

  private onMessage(msg: FromChild): void {
    switch (msg.type) {
      case 'heartbeat':
        this.emit('heartbeat');
        return;
      case 'state': {
        const changed =
          msg.state !== this.current.state || msg.message !== this.current.message || msg.readers.join('\n') !== this.current.readers.join('\n');
        if (changed) this.setStatus(msg.state, { message: msg.message, fix: msg.fix ?? null }, msg.readers);
        return;
      }
      case 'card':
        this.current.cards = [...this.current.cards.filter((c) => c.reader !== msg.card.reader), msg.card];
        this.emit('card', msg.card);
        this.emit('status', this.status());
        return;
      case 'card.off':
        this.current.cards = this.current.cards.filter((c) => c.reader !== msg.reader);
        this.emit('card.off', { reader: msg.reader, uid: msg.uid });
        return;
      case 'result': {
        const p = this.pending.get(msg.id);
        if (!p) return;
        this.pending.delete(msg.id);
        clearTimeout(p.timer);
        if (msg.ok) p.resolve(msg.outcome);
        else p.reject(new NfcError(msg.error.code, msg.error.message));
        return;
      }
      case 'log':
        this.options.log?.(`NFC: ${msg.message}`);
        return;
    }
  }

  private failPending(err: Error): void {
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      this.pending.delete(id);
      p.reject(err);
    }
  }
}
