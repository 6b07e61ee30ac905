import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';

/** Where the numbered .sql migrations live in the source tree. */
export const defaultMigrationsDir = join(import.meta.dirname, 'migrations');

/**
 * Applies every `NNN_name.sql` in `dir` that has not been applied yet, in name order, each in
 * its own transaction. Applied names are recorded (not a single counter), so migrations added
 * on parallel branches merge without renumbering.
 */
export function migrate(db: Database, dir: string = defaultMigrationsDir): string[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)`);
  const applied = new Set(
    db.prepare('SELECT name FROM schema_migrations').pluck().all() as string[],
  );
  const files = readdirSync(dir).filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f)).sort();
  const record = db.prepare('INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)');
  const ran: string[] = [];
  for (const file of files) {
    if (applied.has(file)) continue;
    const sql = readFileSync(join(dir, file), 'utf8');
    db.transaction(() => {
      db.exec(sql);
      record.run(file, new Date().toISOString());
    })();
    ran.push(file);
  }
  return ran;
}
