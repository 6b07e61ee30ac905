/**
 * Where the scan handler sends a batch to be recorded, on the handler's own connection: the
 * callback runs only once the batch is committed and as durable as the connection's
 * `synchronous` setting asks (or failed), and the handler answers the scans only then.
 */
import { Worker } from 'node:worker_threads';
import type { Database } from 'better-sqlite3';
import { deferredFlush } from '../../db/deferredFlush.ts';
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
 * For a file database opened with `synchronous = FULL` (the default): each batch commits on `db`
 * with `synchronous = NORMAL` (no flush inside COMMIT) and is reported only after a group fdatasync
 * of the WAL that started after the commit (db/walSync.ts): as durable as a FULL commit, but
 * the event loop goes on while the disk flushes, and batches committed meanwhile share the next
 * flush. Null for an in-memory database or one opened with a weaker `synchronous` (there the
 * plain inline sink already gives the durability asked for).
 */
export function walSyncedSink(db: Database): ScanSink | null {
  if (db.memory || !db.name || db.name === ':memory:') return null;
  if (Number(db.pragma('synchronous', { simple: true })) < 2) return null;
  const inline = inlineSink(db);
  const deferFlush = deferredFlush(db);
  const wal = new WalSync(db.name);
  return {
    write(scans, done) {
      // The inline sink reports synchronously; act on it once the connection's level is back.
      let outcome: Parameters<typeof done> = [new Error('scan batch not recorded')];
      deferFlush(() => inline.write(scans, (...reported) => (outcome = reported)));
      const [err, results] = outcome;
      if (err) done(err);
      else wal.afterCommit((flushErr) => (flushErr ? done(flushErr) : done(null, results)));
    },
    close: () => wal.close(),
  };
}

/**
 * Moves WAL checkpoints of a file database to a background thread: `wal_autocheckpoint` is
 * turned off on `db` (so no commit on it stalls for a checkpoint's copy and fsync) and a worker
 * runs PASSIVE checkpoints every second on its own connection (it never writes rows, so it cannot
 * conflict with transactions on `db`). If that thread dies, automatic checkpoints are turned
 * back on. Returns the stop function, or null for an in-memory database.
 */
export function backgroundCheckpoints(db: Database, onError: (err: unknown) => void): (() => Promise<void>) | null {
  if (db.memory || !db.name || db.name === ':memory:') return null;
  const previous = Number(db.pragma('wal_autocheckpoint', { simple: true }));
  const worker = new Worker(new URL('./checkpointer.worker.ts', import.meta.url), { workerData: { file: db.name } });
  worker.unref();
  let running = true;
  const restore = () => {
    if (!running) return;
    running = false;
    if (db.open) db.pragma(`wal_autocheckpoint = ${previous > 0 ? previous : 1000}`);
  };
  worker.on('error', (err) => {
    onError(err);
    restore();
  });
  worker.on('exit', restore);
  db.pragma('wal_autocheckpoint = 0');
  return async () => {
    if (!running) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ close: true });
    await exited;
    restore();
  };
}
