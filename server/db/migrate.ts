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
    // A migration that rebuilds a table (SQLite cannot drop a constraint) must run with foreign
    // keys off, else dropping the old table would cascade to its children. Checked before commit.
    const rebuild = sql.startsWith('-- migrate: foreign_keys off');
    const fk = db.pragma('foreign_keys', { simple: true }) as number;
    if (rebuild) db.pragma('foreign_keys = OFF');
    try {
      db.transaction(() => {
        db.exec(sql);
        if (rebuild && (db.pragma('foreign_key_check') as unknown[]).length > 0) throw new Error(`Migration ${file} broke foreign keys`);
        record.run(file, new Date().toISOString());
      })();
    } finally {
      if (rebuild) db.pragma(`foreign_keys = ${fk ? 'ON' : 'OFF'}`);
    }
    ran.push(file);
  }
  return ran;
}
