import BetterSqlite3 from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * One serving process per SQLite data directory. Two `serve` processes on one file would each
 * cache what scans serve and run their own workers, and neither would hear of the other's changes
 * (PostgreSQL processes tell each other over LISTEN/NOTIFY; SQLite has no such channel), so a
 * PATCH answered by one could be served stale by the other indefinitely.
 *
 * The lock is an exclusive SQLite lock on `<data>/serve.lock`, held while the process serves. The
 * operating system drops it when the process ends, however it ends, so a crash leaves nothing
 * stale to clean up. Short-lived commands (`org create`, `keys create`, `export`) do not take it
 * and keep working beside a running server.
 */
export interface ServingLock {
  release(): void;
}

export class DataDirectoryInUseError extends Error {}

export function lockDataDirectory(dataDir: string): ServingLock {
  mkdirSync(dataDir, { recursive: true });
  // timeout 0: refuse at once instead of waiting for the other process.
  const db = new BetterSqlite3(join(dataDir, 'serve.lock'), { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') {
      // Worded to follow "cannot use data directory <dir>: " (the CLI's start-up error).
      throw new DataDirectoryInUseError(
        'another Waymark server is serving it: stop that one first, or give this one its own --data directory ' +
          '(several processes can serve one PostgreSQL database: docs/deploy.md)',
      );
    }
    throw err;
  }
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      db.close();
    },
  };
}
