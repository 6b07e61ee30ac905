import { tryTransactionLock } from '../db/locks.ts';
import type { Executor, Store } from '../db/store.ts';

/** What one chunk did: rows it removed, and whether the pass is over. */
export interface PruneChunk {
  removed: number;
  done: boolean;
}

/**
 * A pruning pass that runs now and then in the background (the event outbox's, the sync change
 * outbox's): one pass every `everyMs`, started and stopped with the app. A failed pass is logged
 * and the next one runs on schedule.
 */
export class PeriodicPrune {
  private readonly everyMs: number;
  private readonly pass: () => Promise<unknown>;
  private readonly onError: (err: unknown) => void;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();

  constructor(options: { everyMs: number; pass: () => Promise<unknown>; onError: (err: unknown) => void }) {
    this.everyMs = options.everyMs;
    this.pass = options.pass;
    this.onError = options.onError;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.running = this.pass().catch(this.onError);
    }, this.everyMs);
    // Never what keeps the process alive.
    this.timer.unref();
  }

  /** No pass starts after this; resolves once the one under way (if any) is over. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}

/**
 * Runs `chunk` in one short transaction after another until it says it is done; returns the rows
 * removed. Each transaction first takes the advisory lock `lock` (PostgreSQL; SQLite's one writer
 * is the lock): when another process holds it, that process is pruning and this pass stops. The
 * event loop gets a turn between chunks, so requests go through (on SQLite a chunk holds it).
 */
export async function pruneInChunks(store: Store, lock: string, chunk: (tx: Executor) => Promise<PruneChunk>): Promise<number> {
  let removed = 0;
  for (;;) {
    const step = await store.transaction(async (tx) => ((await tryTransactionLock(tx, store.dialect, lock)) ? chunk(tx) : null));
    if (step === null) return removed;
    removed += step.removed;
    if (step.done) return removed;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
