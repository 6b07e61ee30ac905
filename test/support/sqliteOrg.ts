import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';

/** Test set-up: an organization row on a bare SQLite connection; returns its id. */
export function insertOrg(db: Database, name: string): string {
  const id = randomUUID();
  db.prepare('INSERT INTO organizations (id, name, created_at) VALUES (?, ?, ?)').run(id, name, new Date(0).toISOString());
  return id;
}
