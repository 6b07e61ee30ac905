/**
 * The scan path's cache when several processes share one database (PostgreSQL): what a slug
 * serves, kept in memory per process, with a bound on how stale it may be. The epoch in
 * scan_cache_epoch moves with every change that can alter what a scan serves (triggers on nodes,
 * rules, slugs and webhooks); this cache may be used only while an epoch read *sent* less than
 * `staleMs` ago confirmed it, so a change committed before that read is what every later scan
 * serves: a change is served by every process at most `staleMs` after its commit. Notifications
 * (LISTEN, sent by the same triggers) and a background read every `staleMs / 4` keep it confirmed
 * and drop it early; the bound holds without them.
 */
import type { CacheEntry } from './resolver.ts';

export class SharedScanCache {
  private readonly entries = new Map<string, CacheEntry>();
  private epoch = -1;
  /** Moves with every clear: entries loaded across one are not kept (they may predate it). */
  private gen = 0;
  /** When (monotonic ms) the read that last confirmed the epoch was sent. */
  private confirmedAt = Number.NEGATIVE_INFINITY;
  private confirming: Promise<void> | null = null;
  private readonly readEpoch: () => Promise<number>;
  private readonly now: () => number;
  private readonly max: number;
  readonly staleMs: number;

  constructor(readEpoch: () => Promise<number>, staleMs: number, options: { now?: () => number; max?: number } = {}) {
    this.readEpoch = readEpoch;
    this.staleMs = staleMs;
    this.now = options.now ?? (() => performance.now());
    this.max = options.max ?? 50_000;
  }

  get generation(): number {
    return this.gen;
  }

  /** Confirmed within the bound: entries may be served now. */
  fresh(): boolean {
    return this.now() - this.confirmedAt < this.staleMs;
  }

  /** Reads the epoch (one read at a time: a caller arriving meanwhile shares it, then checks fresh()). */
  confirm(): Promise<void> {
    if (this.confirming) return this.confirming;
    const sentAt = this.now();
    this.confirming = this.readEpoch()
      .then((epoch) => {
        this.moved(epoch);
        // A read older than a notification already applied leaves the newer epoch (moved ignores
        // it): entries were loaded after that epoch was known, so they hold at sentAt too.
        if (sentAt > this.confirmedAt) this.confirmedAt = sentAt;
      })
      .finally(() => {
        this.confirming = null;
      });
    return this.confirming;
  }

  /** The epoch is now at least `epoch` (a notification, or a read): drop everything older. */
  moved(epoch: number): void {
    if (epoch <= this.epoch) return;
    this.epoch = epoch;
    this.entries.clear();
    this.gen++;
  }

  get(slug: string): CacheEntry | undefined {
    return this.entries.get(slug);
  }

  /** Keeps an entry loaded while `generation` was `gen` (dropped if a clear came in between). */
  put(gen: number, slug: string, entry: CacheEntry): void {
    if (gen !== this.gen) return;
    if (this.entries.size >= this.max) this.entries.clear();
    this.entries.set(slug, entry);
  }
}
