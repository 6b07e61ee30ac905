/**
 * Where the scan handler sends a batch to be recorded: the callback runs only once the batch is
 * committed and as durable as the database's `synchronous` setting asks (or failed), and the
 * handler answers the scans only then.
 */
import { Worker } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import { WalSync } from '../../db/walSync.ts';
import { ScanWriter, type ScanRecord, type WriteResult } from './writer.ts';

export interface ScanSink {
  write(scans: ScanRecord[], done: (err: Error | null, results?: WriteResult) => void): void;
  close(): Promise<void>;
}

export function inlineSink(db: Database): ScanSink {
  const writer = new ScanWriter(db);
  return {
    write(scans, done) {
      let results: WriteResult;
      try {
        results = writer.write(scans);
      } catch (err) {
        done(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      done(null, results);
    },
    async close() {},
  };
}

/**
 * The scan path's own connection to a file database opened with `synchronous = FULL` (the
 * default), itself at `synchronous = NORMAL`: its commits are written to the WAL without a flush
 * inside COMMIT, and walSyncedSink reports them only after a group fdatasync of the WAL. Null for
 * an in-memory database or one opened with a weaker `synchronous` (there the plain inline sink on
 * `db` already gives the durability asked for).
 *
 * A connection of its own, rather than switching `db` to NORMAL around each batch: that pragma
 * takes effect only when compiled, so each switch is a fresh prepare (~9 µs, three per batch).
 * Both connections are used from this thread only and every transaction runs synchronously, so
 * their writes never overlap and none waits for the other's lock.
 */
export function openScanConnection(db: Database): Database | null {
  if (db.memory || !db.name || db.name === ':memory:') return null;
  if (Number(db.pragma('synchronous', { simple: true })) < 2) return null;
  // No change-capture functions (db/capture.ts) here: the scan path writes no synced table or
  // column (scan_count is not captured), so a trigger needing them would fail loudly, not
  // record changes under a wrong writer.
  const own = new BetterSqlite3(db.name);
  own.pragma('busy_timeout = 5000');
  own.pragma('foreign_keys = ON');
  own.pragma('synchronous = NORMAL');
  return own;
}

/**
 * Records batches on `own` (from openScanConnection) and reports each only after a group
 * fdatasync of the WAL that started after its commit (db/walSync.ts): as durable as a FULL
 * commit, but the event loop goes on while the disk flushes, and batches committed meanwhile
 * share the next flush.
 */
export function walSyncedSink(own: Database): ScanSink {
  const inline = inlineSink(own);
  const wal = new WalSync(own.name);
  return {
    write(scans, done) {
      inline.write(scans, (err, results) => {
        if (err) done(err);
        else wal.afterCommit((flushErr) => (flushErr ? done(flushErr) : done(null, results)));
      });
    },
    close: () => wal.close(),
  };
}

/**
 * Moves WAL checkpoints of a file database to a background thread: `wal_autocheckpoint` is
 * turned off on `connections` (all to the same file, so no commit on them stalls for a
 * checkpoint's copy and fsync) and a worker runs PASSIVE checkpoints every second on its own
 * connection (it never writes rows, so it cannot conflict with their transactions). If that
 * thread dies, automatic checkpoints are turned back on. Returns the stop function, or null for
 * an in-memory database.
 */
export function backgroundCheckpoints(connections: Database[], onError: (err: unknown) => void): (() => Promise<void>) | null {
  const db = connections[0];
  if (!db || db.memory || !db.name || db.name === ':memory:') return null;
  const previous = Number(db.pragma('wal_autocheckpoint', { simple: true }));
  const worker = new Worker(new URL('./checkpointer.worker.ts', import.meta.url), { workerData: { file: db.name } });
  worker.unref();
  let running = true;
  const restore = () => {
    if (!running) return;
    running = false;
    for (const c of connections) if (c.open) c.pragma(`wal_autocheckpoint = ${previous > 0 ? previous : 1000}`);
  };
  worker.on('error', (err) => {
    onError(err);
    restore();
  });
  worker.on('exit', restore);
  for (const c of connections) c.pragma('wal_autocheckpoint = 0');
  return async () => {
    if (!running) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ close: true });
    await exited;
    restore();
  };
}
