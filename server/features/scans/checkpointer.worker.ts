/**
 * Worker thread that checkpoints the WAL (PASSIVE: never blocks writers or readers) once a
 * second on its own connection, so that the scan writer, which runs with wal_autocheckpoint off,
 * never stalls on a checkpoint's copy and fsync in the middle of a group commit.
 * workerData: { file }. Message { close } stops it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';

const { file } = workerData as { file: string };
const db = new BetterSqlite3(file);
db.pragma('busy_timeout = 1000');
// A checkpoint flushes the WAL before copying it and the database before the WAL may be reused,
// at NORMAL or FULL (not OFF): scan commits are durable only through that (db/walSync.ts).
db.pragma('synchronous = NORMAL');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // busy: next second
  }
}, 1000);

parentPort?.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort?.close();
});
