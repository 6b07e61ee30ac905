import BetterSqlite3 from 'better-sqlite3';
import type { Database } from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { initCapture, loadWriter, registerCapture } from './capture.ts';
import { migrate } from './migrate.ts';

export type { Database };

export interface OpenDatabaseOptions {
  /** Folder of numbered .sql migrations; defaults to server/db/migrations. */
  migrationsDir?: string;
  /**
   * `full` (default) fsyncs every commit, so nothing committed is lost even on power loss;
   * `normal` survives process crashes but may lose the last commits on power loss.
   */
  synchronous?: 'full' | 'normal';
}

/** Opens (creating if needed) the SQLite file, sets the pragmas and applies migrations. */
export function openDatabase(file: string, options: OpenDatabaseOptions = {}): Database {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  db.pragma(`synchronous = ${options.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
  registerCapture(db);
  loadWriter(db);
  migrate(db, options.migrationsDir);
  initCapture(db);
  return db;
}
