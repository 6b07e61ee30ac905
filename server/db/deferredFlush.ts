/**
 * Commits whose flush to disk is deferred: `commit` runs with `synchronous = NORMAL` on this
 * connection (in WAL mode the commit is written to the WAL but not fsynced), and the
 * connection's own level is restored afterwards. A process crash loses nothing; a power cut may
 * lose such a commit until the next flush of the WAL (any FULL commit, a checkpoint, or
 * db/walSync.ts). Inside a transaction, or at a level already below FULL, `commit` just runs.
 *
 * `PRAGMA synchronous` is compiled afresh on every call (db.pragma): SQLite applies this pragma,
 * and reads its value, when the statement is prepared, so a prepared statement run again neither
 * sets nor reads the current level.
 */
import type { Database } from 'better-sqlite3';

export type DeferFlush = <T>(commit: () => T) => T;

export function deferredFlush(db: Database): DeferFlush {
  return (commit) => {
    if (db.inTransaction) return commit();
    const level = Number(db.pragma('synchronous', { simple: true }));
    if (level < 2) return commit();
    db.pragma('synchronous = NORMAL');
    try {
      return commit();
    } finally {
      db.pragma(`synchronous = ${level}`);
    }
  };
}
