import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { isTransactionRollback } from '../../db/rollbackRetry.ts';
import type { Clock } from '../../platform/clock.ts';
import type { BatchService, GenerationLease } from './service.ts';

export interface BatchGeneratorOptions {
  /** Nodes per transaction. */
  chunkSize?: number;
  /** How long a claim on a batch lasts after each chunk; another process takes over after it. */
  leaseMs?: number;
  /**
   * Whether other processes generate from the same database (PostgreSQL). Without them (SQLite:
   * one process per file) a lease left by a crash is taken over at once on restart.
   */
  shared?: boolean;
  /** This process's name in batches.lease_owner (default: host, pid and a random suffix). */
  owner?: string;
}

/** Longest wait between looks for batches to take over (a batch created by another process). */
const POLL_MS = 30_000;
/** After a transient database error, try again this much later. */
const RETRY_MS = 1_000;

/**
 * Errors worth a retry rather than failing the batch: PostgreSQL's transaction rollbacks
 * (serialization failure, deadlock: class 40), lost connections (class 08) and a server
 * shutting down (57P), or a connection the driver saw close.
 */
function isTransient(err: unknown): boolean {
  if (isTransactionRollback(err)) return true;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^(08|57P)/.test(code)) return true;
  return err instanceof Error && /Connection terminated|ECONNRESET|ECONNREFUSED/.test(err.message);
}

/**
 * Background worker that turns `generating` batches into nodes, a chunk per transaction,
 * yielding to the event loop between chunks so the API stays responsive. On start it resumes
 * whatever a crash left behind.
 *
 * Many processes (PostgreSQL): a process claims a batch with a lease (FOR UPDATE SKIP LOCKED, so
 * two never claim one at once) and renews it with every chunk; a batch whose process died keeps
 * its lease until it runs out, then another process's generator claims it and carries on from
 * the last committed chunk. Chunks lock the batch row, so even a process that lost its lease
 * while slow cannot make a node twice.
 */
export class BatchGenerator {
  private running = false;
  private stopped = true;
  private again = false;
  private idle: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;

  private readonly service: BatchService;
  private readonly clock: Clock;
  private readonly chunkSize: number;
  private readonly lease: GenerationLease;
  private readonly shared: boolean;

  constructor(service: BatchService, clock: Clock, options: BatchGeneratorOptions = {}) {
    this.service = service;
    this.clock = clock;
    this.chunkSize = options.chunkSize ?? 50;
    this.shared = options.shared ?? false;
    this.lease = { owner: options.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`, ms: options.leaseMs ?? 30_000 };
  }

  start(): void {
    this.stopped = false;
    this.kick();
  }

  /** Asks the worker to look for work (after a create or a retry). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.clearTimer();
    this.running = true;
    this.again = false;
    this.idle = this.loop()
      .catch(() => {
        // The database was unreachable, or a chunk hit a transient error: look again later.
        this.schedule(RETRY_MS);
      })
      .finally(() => {
        this.running = false;
        if (this.again) this.kick();
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.clearTimer();
    await this.idle;
  }

  private async loop(): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      const id = await this.service.claimNext(this.lease, this.shared);
      if (id === undefined) break;
      let done = false;
      while (!done && !this.stopped) {
        try {
          done = await this.service.generateChunk(id, this.chunkSize, this.lease);
        } catch (err) {
          // Nothing of the chunk committed: a transient error leaves the batch to the next look.
          if (isTransient(err)) throw err;
          await this.service.fail(id, err instanceof Error ? err.message : String(err));
          done = true;
        }
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    if (this.shared) await this.watchOthers();
  }

  /** Looks again when another process's lease runs out, and now and then for batches created elsewhere. */
  private async watchOthers(): Promise<void> {
    const expiry = await this.service.nextLeaseExpiry(this.lease.owner);
    const untilExpiry = expiry === null ? POLL_MS : Math.max(0, expiry - this.clock.now()) + 10;
    this.schedule(Math.min(POLL_MS, untilExpiry));
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.clearTimer();
    this.timer = setTimeout(() => {
      this.timer = null;
      this.kick();
    }, ms);
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
