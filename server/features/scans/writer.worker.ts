/**
 * Worker thread that records scan batches on its own SQLite connection (see writer.ts).
 * workerData: { file, synchronous }. Messages in: { seq, scans } or { close }; out:
 * { seq, results } or { seq, error }. Batches that queue up while a commit runs are merged into
 * the next transaction (group commit across batches) and each is answered after it commits.
 */
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import { ScanWriter, type ScanRecord } from './writer.ts';

const { file, synchronous } = workerData as { file: string; synchronous: number };
const db = new BetterSqlite3(file);
db.pragma('journal_mode = WAL');
db.pragma('foreign_keys = ON');
db.pragma('busy_timeout = 5000');
db.pragma(`synchronous = ${synchronous >= 2 ? 'FULL' : 'NORMAL'}`);
const writer = new ScanWriter(db);

let queue: Array<{ seq: number; scans: ScanRecord[] }> = [];
let scheduled = false;
let closing = false;

function drain(): void {
  scheduled = false;
  const batches = queue;
  queue = [];
  if (batches.length > 0) {
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
