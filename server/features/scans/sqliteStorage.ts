/**
 * The scan path on SQLite (storage.ts): reads and records on a connection of its own at NORMAL,
 * each group commit reported once a WAL fdatasync that started after it has returned (sink.ts
 * walSyncedSink), WAL checkpoints on a background thread. Everything here is synchronous: a view
 * is ready as soon as it is asked for. This is the hot path measured in docs/scans.md.
 */
import { randomBytes } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { ScanRepo } from './repo.ts';
import { ScanCache } from './resolver.ts';
import { backgroundCheckpoints, inlineSink, openScanConnection, walSyncedSink } from './sink.ts';
import type { ScanStorage, ScanView } from './storage.ts';
import { utcDay } from './visitor.ts';

export interface SqliteScanStorageOptions {
  /** The app's connection to the database file (synchronous=FULL unless opened otherwise). */
  db: Database;
  /** WAL checkpoints on a background thread instead of inside commits (default true; sink.ts). */
  backgroundCheckpoints?: boolean;
  /**
   * How a scan commit reaches the disk at synchronous=FULL: `off-thread` (default), a group
   * fdatasync of the WAL on the thread pool after a NORMAL commit on the scan path's own
   * connection; `in-commit`, SQLite's own fsync inside COMMIT, which blocks this thread (for
   * comparison).
   */
  flush?: 'off-thread' | 'in-commit';
  /**
   * Batches committed and not yet durable, at most (default 1: the scans arriving while a batch
   * is flushed form the next batch, committed as that flush returns, so each flush carries one
   * commit of all of them; with 2, a small batch slipped in behind each flush and cost a commit).
   */
  maxInFlight?: number;
  onError: (err: unknown) => void;
}

export function sqliteScanStorage(options: SqliteScanStorageOptions): ScanStorage {
  const own = options.flush === 'in-commit' ? null : openScanConnection(options.db);
  const db = own ?? options.db;
  const repo = new ScanRepo(db);
  const cache = new ScanCache(repo);
  const sink = own ? walSyncedSink(own) : inlineSink(db);
  const stopCheckpoints = options.backgroundCheckpoints === false ? null : backgroundCheckpoints(own ? [options.db, own] : [db], options.onError);
  let salt: { from: number; to: number; value: string } | null = null;

  const view: ScanView = {
    entry: (slug) => cache.get(slug),
    salt(at) {
      // Same UTC day as the cached salt: no date formatting per scan.
      if (salt && at >= salt.from && at < salt.to) return salt.value;
      const day = utcDay(at);
      const from = Date.parse(`${day}T00:00:00.000Z`);
      salt = { from, to: from + 86_400_000, value: repo.saltFor(day, () => randomBytes(32).toString('base64url')) };
      return salt.value;
    },
  };

  return {
    view() {
      cache.sync();
      return view;
    },
    write: (records, done) => sink.write(records, done),
    scanCount: (nodeId) => repo.scanCountOf(nodeId),
    maxInFlight: options.maxInFlight ?? 1,
    async close() {
      await sink.close();
      await stopCheckpoints?.();
      own?.close();
    },
  };
}
