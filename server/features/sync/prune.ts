import type { Executor, Store } from '../../db/store.ts';
import type { Clock } from '../../platform/clock.ts';
import { formatHlc } from '../../platform/hlc.ts';
import { PeriodicPrune, type PruneChunk, pruneInChunks } from '../../platform/periodicPrune.ts';
import type { HistoryRow, ReplicationRepo, SyncRepo } from './repo.ts';
import type { SyncLogger } from './site.ts';

export interface PruneOptions {
  /** How long every change is kept whole (default 30 days): docs/sync.md, "Compaction". */
  retentionMs: number;
  /** How often the compaction runs (default hourly). */
  everyMs: number;
  /** Outbox rows examined per transaction (each chunk is one short transaction). */
  chunk: number;
}

export const DEFAULT_PRUNE_OPTIONS: PruneOptions = { retentionMs: 30 * 24 * 3_600_000, everyMs: 3_600_000, chunk: 500 };

const CURSOR = 'sync.prune_seq';
/** One process compacts at a time (PostgreSQL advisory lock). */
const LOCK = 'sync-prune';

/**
 * The rows of an entity's history that no longer carry anything: an upsert is superseded when a
 * later row (by seq) deletes the entity or writes every field it wrote. Deletes are kept (the
 * tombstone must reach every instance), and so is the latest write of every field: replaying what
 * is left gives the same rows, the same versions and the same tombstones. On one instance a later
 * seq carries a newer version of a field (a write wins over the current value or is not recorded),
 * so the superseding row is also the newer one.
 */
export function supersededRows(history: HistoryRow[]): HistoryRow[] {
  const covered = new Set<string>();
  let deletedLater = false;
  const out: HistoryRow[] = [];
  for (let i = history.length - 1; i >= 0; i--) {
    const row = history[i]!;
    if (row.op === 'delete') {
      deletedLater = true;
      continue;
    }
    const fields = Object.keys(JSON.parse(row.fields) as Record<string, unknown>);
    if (deletedLater || fields.every((f) => covered.has(f))) out.push(row);
    for (const f of fields) covered.add(f);
  }
  return out.reverse();
}

/**
 * Compaction of the change outbox (the site's queue and the remote's feed), so that it grows with
 * the data and not with every edit ever made, on both backends (docs/sync.md, "Compaction"). A
 * pass walks the rows old enough (older than the retention by HLC) from where the last one
 * stopped, and for each entity they touch drops the superseded rows of its history that are old
 * enough too. Received-but-unapplied edits (sync_unapplied) older than the retention go as well.
 */
export class SyncPruner {
  private readonly store: Store;
  private readonly rows: ReplicationRepo;
  private readonly settings: SyncRepo;
  private readonly clock: Clock;
  private readonly options: PruneOptions;
  private readonly worker: PeriodicPrune;

  constructor(deps: { store: Store; rows: ReplicationRepo; settings: SyncRepo; clock: Clock; logger: SyncLogger; options?: Partial<PruneOptions> | undefined }) {
    this.store = deps.store;
    this.rows = deps.rows;
    this.settings = deps.settings;
    this.clock = deps.clock;
    this.options = { ...DEFAULT_PRUNE_OPTIONS, ...deps.options };
    this.worker = new PeriodicPrune({
      everyMs: this.options.everyMs,
      pass: () => this.prune(),
      onError: (err) => deps.logger.error('sync: compacting the change outbox failed', err),
    });
  }

  start(): void {
    this.worker.start();
  }

  async stop(): Promise<void> {
    await this.worker.stop();
  }

  /** One pass; returns how many outbox rows it dropped. */
  async prune(): Promise<number> {
    const cutoff = formatHlc(Math.max(0, this.clock.now() - this.options.retentionMs), 0);
    const dropped = await pruneInChunks(this.store, LOCK, (tx) => this.chunk(tx, cutoff));
    // Bounded chunks here too, one process at a time: no long transaction however much there is.
    await pruneInChunks(this.store, LOCK, async (tx) => {
      const found = await this.rows.pruneUnapplied(tx, cutoff, this.options.chunk);
      return { removed: found, done: found < this.options.chunk };
    });
    return dropped;
  }

  /** One chunk in one transaction (holding the compaction lock). */
  private async chunk(tx: Executor, cutoff: string): Promise<PruneChunk> {
    const from = Number((await this.settings.getSetting(tx, CURSOR)) ?? '0');
    const batch = await this.rows.outboxAfter(tx, from, this.options.chunk);
    let upTo = from;
    let done = batch.length < this.options.chunk;
    const entities = new Map<string, { entity: string; id: string }>();
    for (const r of batch) {
      // Rows are read in seq order, HLCs roughly so: stop at the first one still within the retention.
      if (r.hlc >= cutoff) {
        done = true;
        break;
      }
      upTo = r.seq;
      entities.set(`${r.entity}\u0000${r.entity_id}`, { entity: r.entity, id: r.entity_id });
    }
    const drop: number[] = [];
    for (const { entity, id } of entities.values()) {
      for (const row of supersededRows(await this.rows.history(tx, entity, id))) if (row.hlc < cutoff) drop.push(row.seq);
    }
    await this.rows.deleteOutboxRows(tx, drop);
    if (upTo > from) await this.settings.setSetting(tx, CURSOR, String(upTo));
    return { removed: drop.length, done };
  }
}
