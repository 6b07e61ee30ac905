/**
 * Both storage backends for tests. PostgreSQL comes from `WAYMARK_TEST_DATABASE` (the test
 * launcher starts a private cluster, see docs/development.md); each call makes a fresh database
 * on that server, so suites never see each other's rows.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDatabase } from '../../server/db/database.ts';
import { PostgresStore } from '../../server/db/postgresStore.ts';
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

export interface TestStore {
  store: Store;
  close(): Promise<void>;
}

export async function openTestStore(dialect: 'sqlite' | 'postgres'): Promise<TestStore> {
  if (dialect === 'postgres') {
    const database = await freshPostgresDatabase();
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
