/**
 * Both storage backends for tests. PostgreSQL comes from `WAYMARK_TEST_DATABASE` (the test
 * launcher starts a private cluster, see docs/development.md); each call makes a fresh database
 * on that server, so suites never see each other's rows.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDatabase } from '../../server/db/database.ts';
import { PostgresStore, postgresMigrationsDir } from '../../server/db/postgresStore.ts';
import { SqliteStore } from '../../server/db/sqliteStore.ts';
import type { Store } from '../../server/db/store.ts';

export const postgresUrl = process.env.WAYMARK_TEST_DATABASE;

/**
 * Why there is no PostgreSQL server to use, or null. Suites decide with `needs.postgres()`
 * (test/support/system.ts), which also fails the run under CI.
 */
export const postgresMissing = postgresUrl
  ? null
  : 'PostgreSQL not available: install Debian package `postgresql` (the test launcher then sets WAYMARK_TEST_DATABASE)';

/**
 * A fresh, empty database on the test PostgreSQL server; returns its URL. With `template` (the URL
 * of a database no one is connected to), a copy of that database instead, as a restored backup.
 */
export async function freshPostgresDatabase(template?: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (!postgresUrl) throw new Error(postgresMissing!);
  const name = `waymark_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  try {
    const source = template ? new URL(template).pathname.slice(1) : undefined;
    await admin.query(`CREATE DATABASE ${name}${source ? ` TEMPLATE ${pg.escapeIdentifier(source)}` : ''}`);
  } finally {
    await admin.end();
  }
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: postgresUrl });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * A fresh database with every migration already applied: a copy of a template database migrated
 * once per cluster (its name carries a hash of the migration files, so branches with other
 * migrations sharing a dev cluster each get their own). Applying the ~70 migrations takes 1.5–2 s
 * on a loaded machine, and the suites start hundreds of servers on PostgreSQL. Tests of the
 * migration runner itself or of a first start on an empty database use `freshPostgresDatabase()`.
 */
export async function migratedPostgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  return freshPostgresDatabase(await migratedTemplate());
}

let template: Promise<string> | undefined;

function migratedTemplate(): Promise<string> {
  template ??= buildTemplate();
  return template;
}

async function buildTemplate(): Promise<string> {
  if (!postgresUrl) throw new Error(postgresMissing!);
  const hash = createHash('sha256');
  for (const file of readdirSync(postgresMigrationsDir).sort()) hash.update(file).update(readFileSync(join(postgresMigrationsDir, file)));
  const name = `waymark_template_${hash.digest('hex').slice(0, 16)}`;
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  try {
    // One builder per cluster at a time (vitest workers and other checkouts share the cluster).
    await admin.query("SELECT pg_advisory_lock(hashtextextended('waymark:test-template', 0))");
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) {
      // Built under another name and renamed when complete, so no one copies a half-migrated one.
      const building = `${name}_building`;
      await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${building}`);
      const buildingUrl = new URL(postgresUrl);
      buildingUrl.pathname = `/${building}`;
      const store = await PostgresStore.open(buildingUrl.toString(), { poolSize: 1 });
      await store.close();
      // A closed connection's server process exits a moment later; renaming needs it gone.
      for (let i = 0; ; i++) {
        const { rows } = await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [building]);
        if (rows[0].n === 0) break;
        if (i === 100) await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [building]);
        await new Promise((r) => setTimeout(r, 50));
      }
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
    }
  } finally {
    await admin.query("SELECT pg_advisory_unlock(hashtextextended('waymark:test-template', 0))").catch(() => {});
    await admin.end();
  }
  return url.toString();
}

export interface TestStore {
  store: Store;
  close(): Promise<void>;
}

export async function openTestStore(dialect: 'sqlite' | 'postgres'): Promise<TestStore> {
  if (dialect === 'postgres') {
    const database = await migratedPostgresDatabase();
    const store = await PostgresStore.open(database.url, { poolSize: 4 });
    return {
      store,
      close: async () => {
        await store.close();
        await database.drop();
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'waymark-store-'));
  const connection = openDatabase(join(dir, 'waymark.sqlite'));
  const store = new SqliteStore(connection);
  return {
    store,
    close: async () => {
      await store.close();
      connection.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
