import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { freshPostgresDatabase } from '../../test/support/stores.ts';
import { needs } from '../../test/support/system.ts';
import { migratePostgres, postgresMigrationsDir } from './postgresStore.ts';

const postgresMissing = needs.postgres();

describe('PostgreSQL migrations', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('a later migration may change rows of a table with deferred triggers and then alter that table', async ({ skip }) => {
    if (postgresMissing) skip(postgresMissing);
    const db = await freshPostgresDatabase();
    cleanups.push(db.drop);
    const dir = mkdtempSync(join(tmpdir(), 'wm-pg-migrations-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    for (const file of readdirSync(postgresMigrationsDir)) copyFileSync(join(postgresMigrationsDir, file), join(dir, file));
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    cleanups.push(() => pool.end());
    await migratePostgres(pool, dir);
    await pool.query(`INSERT INTO slugs (slug, org_id, node_id, minted_at) VALUES ('7QK2M9XD', 'o1', 'n1', '2026-01-01T00:00:00.000Z')`);

    // slugs carries the scan cache's deferred epoch trigger (073): this UPDATE queues an event.
    writeFileSync(
      join(dir, '999_update_then_alter.sql'),
      `UPDATE slugs SET deleted_at = '2026-01-02T00:00:00.000Z' WHERE slug = '7QK2M9XD';
       ALTER TABLE slugs ADD COLUMN migration_probe TEXT;`,
    );
    expect(await migratePostgres(pool, dir)).toEqual(['999_update_then_alter.sql']);
    const columns = (await pool.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'slugs' AND column_name = 'migration_probe'`)).rowCount;
    expect(columns).toBe(1);
  });
});
