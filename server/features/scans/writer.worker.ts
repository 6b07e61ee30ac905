/**
 * Worker thread that records scan batches on its own SQLite connection (see writer.ts).
 * workerData: { file, synchronous }. Messages in: { seq, scans } or { close }; out:
 * { seq, results } or { seq, error }. Batches that queue up while a commit runs are merged into
 * the next transaction (group commit across batches) and each is answered after it commits.
 */
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import { ScanWriter, type ScanRecord } from './writer.ts';
import { AnalyticsRepo } from './repo.ts';

const { file, synchronous } = workerData as { file: string; synchronous: number };
const db = new BetterSqlite3(file);
db.pragma('journal_mode = WAL');
db.pragma('foreign_keys = ON');
db.pragma('busy_timeout = 5000');
db.pragma(`synchronous = ${synchronous >= 2 ? 'FULL' : 'NORMAL'}`);
// Checkpoints run in checkpointer.worker.ts, not inside this thread's commits.
db.pragma('wal_autocheckpoint = 0');
// Keep the hot index pages (scan_events by node, the outbox tail) in memory as tables grow.
db.pragma('cache_size = -65536');
const writer = new ScanWriter(db);
const rollups = new AnalyticsRepo(db);
let rollupTimer: NodeJS.Timeout | null = null;

/**
 * When idle, fold recorded scans into the analytics roll-ups here, off the main thread, in small
 * chunks (a chunk is one short transaction; new batches go first).
 */
function scheduleRollup(delay: number): void {
  if (rollupTimer || closing) return;
  rollupTimer = setTimeout(() => {
    rollupTimer = null;
    // Scans first: fold only when the writer has been idle for a moment (under sustained load
    // the backlog waits, and an analytics query folds what it needs itself).
    if (queue.length > 0 || closing || Date.now() - lastBatchAt < 500) return scheduleRollup(500);
    let read = 0;
    try {
      read = rollups.rollUp(1000);
    } catch {
      // busy (another connection holds the write lock): try again later
    }
    scheduleRollup(read === 1000 ? 0 : 1000);
  }, delay);
}

let queue: Array<{ seq: number; scans: ScanRecord[] }> = [];
let scheduled = false;
let closing = false;
let lastBatchAt = 0;

function drain(): void {
  scheduled = false;
  const batches = queue;
  queue = [];
  if (batches.length > 0) {
    lastBatchAt = Date.now();
    const all = batches.length === 1 ? (batches[0] as { scans: ScanRecord[] }).scans : batches.flatMap((b) => b.scans);
    try {
      const results = writer.write(all);
      let offset = 0;
      for (const b of batches) {
        parentPort?.postMessage({ seq: b.seq, results: results.slice(offset, offset + b.scans.length) });
        offset += b.scans.length;
      }
    } catch (err) {
      const error = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      for (const b of batches) parentPort?.postMessage({ seq: b.seq, error });
    }
  }
  if (closing) {
    if (rollupTimer) clearTimeout(rollupTimer);
    db.close();
    parentPort?.close();
  }
}

parentPort?.on('message', (msg: { seq: number; scans: ScanRecord[] } | { close: true }) => {
  if ('close' in msg) closing = true;
  else queue.push(msg);
  if (!scheduled) {
    scheduled = true;
    setImmediate(drain);
  }
});

scheduleRollup(1000);
