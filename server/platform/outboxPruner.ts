import type { Executor, Store } from '../db/store.ts';
import type { Clock } from './clock.ts';
import type { Outbox } from './outbox.ts';
import { OutboxRepo } from './outboxRepo.ts';
import { PeriodicPrune, pruneInChunks } from './periodicPrune.ts';

export interface OutboxPruneOptions {
  /** An event is kept at least this long after it was recorded (default 7 days; docs/deploy.md). */
  retentionMs: number;
  /** How often a pass runs (default hourly). */
  everyMs: number;
  /** Events looked at per transaction (each chunk is one short transaction). */
  chunk: number;
}

export const DEFAULT_OUTBOX_PRUNE: OutboxPruneOptions = { retentionMs: 7 * 24 * 3_600_000, everyMs: 3_600_000, chunk: 1000 };

const LOCK = 'waymark:outbox-prune';

/**
 * Deletes outbox events nobody needs any more, so that outbox_events grows with the traffic of
 * the retention window and not with every event ever recorded (docs/deploy.md, "What the
 * database keeps"). An event goes when it is older than the retention, every consumer has read it
 * for good (Outbox.addConsumer: the webhook fan-out's cursor) and none still refers to it (a
 * delivery, pending or kept for its log). The newest event always stays: MAX(seq) is where an
 * endpoint created next starts, and the count of events ever recorded on /metrics.
 *
 * A pass walks the outbox in chunks of one short transaction each. On PostgreSQL, processes
 * sharing the database prune one at a time (a transaction-scoped advisory lock; a process that
 * does not get it leaves the pass to the one that has it).
 */
export class OutboxPruner {
  private readonly store: Store;
  private readonly outbox: Outbox;
  private readonly repo: OutboxRepo;
  private readonly clock: Clock;
  private readonly options: OutboxPruneOptions;
  private readonly worker: PeriodicPrune;

  constructor(deps: {
    store: Store;
    outbox: Outbox;
    clock: Clock;
    logger: { error(message: string, err?: unknown): void };
    options?: Partial<OutboxPruneOptions> | undefined;
  }) {
    this.store = deps.store;
    this.outbox = deps.outbox;
    this.repo = new OutboxRepo();
    this.clock = deps.clock;
    this.options = { ...DEFAULT_OUTBOX_PRUNE, ...definedOnly(deps.options ?? {}) };
    this.worker = new PeriodicPrune({
      everyMs: this.options.everyMs,
      pass: () => this.prune(),
      onError: (err) => deps.logger.error('outbox: pruning old events failed', err),
    });
  }

  start(): void {
    this.worker.start();
  }

  async stop(): Promise<void> {
    await this.worker.stop();
  }

  /** One pass; returns how many events it deleted (0 when another process is pruning). */
  async prune(): Promise<number> {
    const before = new Date(this.clock.now() - this.options.retentionMs).toISOString();
    let after = 0;
    return pruneInChunks(this.store, LOCK, async (tx) => {
      const step = await this.chunk(tx, after, before);
      if (step.last !== null) after = step.last;
      return { removed: step.deleted, done: step.last === null };
    });
  }

  /** One chunk in one transaction (holding the pruning lock). */
  private async chunk(tx: Executor, after: number, before: string): Promise<{ deleted: number; last: number | null }> {
    // Bounds read in this transaction: a consumer only moves forward, so what it has read for
    // good stays read.
    let below = await this.repo.maxSeq(tx);
    const consumers = this.outbox.consumers();
    for (const c of consumers) below = Math.min(below, (await c.readThrough(tx)) + 1);
    const seqs = await this.repo.prunable(tx, { after, below, before, limit: this.options.chunk });
    if (seqs.length === 0) return { deleted: 0, last: null };
    const held = new Set<number>();
    for (const c of consumers) for (const seq of await c.stillNeeded(tx, seqs)) held.add(seq);
    const deleted = await this.repo.deleteEvents(
      tx,
      seqs.filter((s) => !held.has(s)),
    );
    return { deleted, last: seqs.length < this.options.chunk ? null : seqs[seqs.length - 1]! };
  }
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
