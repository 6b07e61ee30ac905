import type { Clock } from '../../platform/clock.ts';
import { noAnswerWithin, REMOTE_CALL_TIMEOUT_MS } from './client.ts';
import type { SiteSync, SyncLogger } from './site.ts';

export interface SyncWorkerOptions {
  /** Pause between rounds while all is well (the reserve is also checked after every local write). */
  pollMs: number;
  /** Back-off while the remote is unreachable: doubles from min to max, with jitter. */
  minBackoffMs: number;
  maxBackoffMs: number;
  /** How long `runNow` waits at most before it gives up on the calls in flight. */
  runBoundMs: number;
}

export const DEFAULT_WORKER_OPTIONS: SyncWorkerOptions = { pollMs: 30_000, minBackoffMs: 1_000, maxBackoffMs: 60_000, runBoundMs: REMOTE_CALL_TIMEOUT_MS };

/**
 * Background sync for a paired site: pairs, then keeps the slug reserve topped up; backs off
 * exponentially while the remote is unreachable. Does nothing on an instance without a remote.
 */
export class SyncWorker {
  private readonly site: SiteSync;
  private readonly clock: Clock;
  private readonly logger: SyncLogger;
  private readonly options: SyncWorkerOptions;

  private stopped = true;
  private failures = 0;
  private loopDone: Promise<void> = Promise.resolve();
  /** The round in progress, if any (a run past its bound waits for it to end once its calls are cut). */
  private inRound: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private waiters: Array<() => void> = [];
  private woken = false;

  constructor(site: SiteSync, clock: Clock, logger: SyncLogger, options: Partial<SyncWorkerOptions> = {}) {
    this.site = site;
    this.clock = clock;
    this.logger = logger;
    this.options = { ...DEFAULT_WORKER_OPTIONS, ...options };
  }

  start(): void {
    if (!this.stopped || !this.site.canSync()) return;
    this.stopped = false;
    this.loopDone = this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.loopDone;
    this.flushWaiters();
  }

  /** A local write happened: if the reserve needs topping up and the remote was reachable, go now. */
  nudge(): void {
    if (this.stopped || this.failures !== 0) return;
    this.site.needsWork().then(
      (needed) => {
        if (needed && !this.stopped) this.wake();
      },
      () => {}, // the database is closing: the next round finds out anyway
    );
  }

  /**
   * Runs a round now (ignoring back-off) and resolves when it has finished. A run that arrives
   * while a round is out waits for that round and then its own, and each call may take the whole
   * call timeout; so once `runBoundMs` pass without progress (no page pushed or pulled), the calls
   * in flight are given up (the round fails as unreachable, which the status shows) instead of
   * waiting twice. A long backlog that keeps moving is not cut off: each page restarts the bound.
   */
  runNow(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout>;
      const done = () => {
        clearTimeout(timer);
        unsubscribe();
        this.waiters = this.waiters.filter((w) => w !== done);
        resolve();
      };
      const giveUp = () => {
        unsubscribe();
        this.site.giveUp(noAnswerWithin(this.options.runBoundMs));
        const round = this.inRound;
        this.waiters = this.waiters.filter((w) => w !== done);
        if (round) round.then(done, done);
        else done();
      };
      const arm = () => {
        clearTimeout(timer);
        timer = setTimeout(giveUp, this.options.runBoundMs);
        timer.unref?.();
      };
      const unsubscribe = this.site.onProgress(arm);
      arm();
      this.waiters.push(done);
      this.wake();
    });
  }

  private wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  private flushWaiters(): void {
    const waiters = this.waiters;
    this.waiters = [];
    waiters.forEach((w) => w());
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      this.woken = false;
      const waiting = this.waiters;
      this.waiters = [];
      let delay: number;
      const round = this.site.step();
      this.inRound = round.then(
        () => {},
        () => {},
      );
      try {
        await round;
        if (this.failures > 0) this.logger.info('sync: remote reachable again');
        this.failures = 0;
        delay = this.options.pollMs;
      } catch (err) {
        this.failures += 1;
        if (this.failures === 1) this.logger.error(`sync: ${err instanceof Error ? err.message : String(err)}; retrying with back-off`);
        const base = Math.min(this.options.maxBackoffMs, this.options.minBackoffMs * 2 ** Math.min(this.failures - 1, 30));
        delay = Math.round(base / 2 + Math.random() * (base / 2));
      }
      this.inRound = null;
      waiting.forEach((w) => w());
      if (this.stopped) break;
      this.site.noteNextAttempt(this.clock.now() + delay);
      if (!this.woken) await this.sleep(delay);
    }
    this.site.noteNextAttempt(null);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref?.();
      this.wakeUp = done;
    });
  }
}
