/**
 * What the scan handler needs from the database, behind one interface with two implementations:
 *
 * - SQLite (sqliteStorage.ts), the embedded default and the measured hot path: synchronous, on a
 *   connection of its own, group commits flushed by an fdatasync off the event loop;
 * - PostgreSQL (postgresStorage.ts), the central tier with many processes: async, per-process
 *   group commits, and a cache every process keeps within a bounded staleness.
 *
 * `view` may answer synchronously (SQLite always does), so the SQLite path pays for no promise.
 */
import type { CacheEntry } from './resolver.ts';
import type { ScanRecord, WriteResult } from './writer.ts';

/** Resolution state for one batch: what each slug serves, and the visitor salt of each instant. */
export interface ScanView {
  entry(slug: string): CacheEntry;
  salt(at: number): string;
}

/** What a view is asked for: a scan's slug and instant (the handler's pending scans are these). */
export interface ScanKey {
  slug: string;
  at: number;
}

export interface ScanStorage {
  /**
   * The view for these scans' slugs and instants (clock ms), current as the storage promises: on SQLite
   * as of this call; on PostgreSQL no older than its staleness bound (docs/scans.md).
   */
  view(scans: ReadonlyArray<ScanKey>): ScanView | Promise<ScanView>;
  /**
   * Records a batch in one transaction; `done` runs once it is committed and durable (or failed),
   * with each scan's event id or null (its node was deleted meanwhile: not recorded).
   */
  write(records: ScanRecord[], done: (err: Error | null, results?: WriteResult) => void, recount?: Recount): void;
  /**
   * A node's scan_count as stored now (undefined: no such node): the count of every scan any
   * process has answered, since each is answered only after its commit. Requests that record
   * nothing decide max_scans on it (handler.ts); synchronous on SQLite.
   */
  scanCount(nodeId: string): number | undefined | Promise<number | undefined>;
  /** Batches committed and not yet durable, at most. */
  readonly maxInFlight: number;
  /** Stops background work and closes what the storage opened (the caller closes the store). */
  close(): Promise<void>;
}

/**
 * Called by a storage that several processes write (PostgreSQL) inside the batch's transaction,
 * once the batch's nodes are locked, with each node's scan_count as stored: the handler resolves
 * again, in place, the records of nodes with max_scans whose count moved since its cache read it
 * (docs/scans.md "Node limits": exact across processes). Synchronous: nothing else runs meanwhile.
 * SQLite, one process whose cache counts every scan, has no use for it.
 */
export type Recount = (scanCounts: ReadonlyMap<string, number>) => void;

/** True for a view still being prepared (PostgreSQL), false for one ready now (SQLite). */
export function isPending<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as Promise<T> | null)?.then === 'function';
}
