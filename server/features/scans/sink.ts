/**
 * Where the scan handler sends a batch to be recorded: inline (synchronous, on the handler's own
 * connection) or a worker thread with its own connection. Either way the callback runs only
 * after the batch committed (or failed), and the handler answers the scans only then.
 */
import { Worker } from 'node:worker_threads';
import type { Database } from 'better-sqlite3';
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

/**
 * A worker-thread sink for a file database; null when that is impossible (in-memory DB). If the
 * worker dies, batches are written inline on `db` from then on (slower, still durable).
 */
export function workerSink(db: Database, onCrash: (err: unknown) => void): ScanSink | null {
  if (db.memory || !db.name || db.name === ':memory:') return null;
  const synchronous = Number(db.pragma('synchronous', { simple: true }));
  const worker = new Worker(new URL('./writer.worker.ts', import.meta.url), {
    workerData: { file: db.name, synchronous },
  });
  worker.unref();
  const checkpointer = new Worker(new URL('./checkpointer.worker.ts', import.meta.url), { workerData: { file: db.name } });
  checkpointer.unref();
  checkpointer.on('error', onCrash);
  const waiting = new Map<number, (err: Error | null, results?: WriteResult) => void>();
  let next = 0;
  let dead: Error | null = null;
  let fallback: ScanSink | null = null;
  const failAll = (err: Error) => {
    for (const done of waiting.values()) done(err);
    waiting.clear();
  };
  worker.on('message', (msg: { seq: number; results?: WriteResult; error?: string }) => {
    const done = waiting.get(msg.seq);
    if (!done) return;
    waiting.delete(msg.seq);
    if (msg.error !== undefined) done(new Error(msg.error));
    else done(null, msg.results);
  });
  worker.on('error', (err) => {
    dead = err;
    onCrash(err);
    failAll(err);
  });
  worker.on('exit', (code) => {
    if (!dead) dead = new Error(`scan writer exited with code ${code}`);
    failAll(dead);
  });
  return {
    write(scans, done) {
      if (dead) {
        fallback ??= inlineSink(db);
        return fallback.write(scans, done);
      }
      const seq = next++;
      waiting.set(seq, done);
      worker.postMessage({ seq, scans });
    },
    async close() {
      await new Promise<void>((resolve) => {
        checkpointer.once('exit', () => resolve());
        checkpointer.postMessage({ close: true });
      });
      if (dead) return;
      await new Promise<void>((resolve) => {
        worker.once('exit', () => resolve());
        worker.postMessage({ close: true });
      });
    },
  };
}
