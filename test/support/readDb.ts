/**
 * Reads of a test instance's rows from outside the server, on either backend: its SQLite file, or
 * the PostgreSQL database the test harness gave its data directory (server.ts databaseFor).
 * Statements are written once with `?` placeholders; counts and other bigints are numbers on both.
 */
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { databaseOf } from './server.ts';

/** Reads of an instance's rows, written once with `?` placeholders, on SQLite or PostgreSQL. */
export interface Rows {
  all<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T | undefined>;
  /** The first column of every row. */
  pluck<T = unknown>(sql: string, ...params: unknown[]): Promise<T[]>;
  /** The first column of the first row. */
  value<T = unknown>(sql: string, ...params: unknown[]): Promise<T | undefined>;
}

/** A connection of the test's own to an instance's data, kept open for many reads. */
export interface Reader {
  rows: Rows;
  close(): Promise<void>;
}

/**
 * A reader of the instance on `dataDir`: its SQLite file (read-only; in WAL, reads never block the
 * server), or the PostgreSQL database the test harness gave it (a remote when the suites run on
 * PostgreSQL). Counts are numbers on both.
 */
export async function openReader(dataDir: string): Promise<Reader> {
  const url = await databaseOf(dataDir);
  let all: (sql: string, params: unknown[]) => Promise<Array<Record<string, unknown>>>;
  let close: () => Promise<void>;
  if (url) {
    const client = new pg.Client({ connectionString: url, types: { getTypeParser: (oid, format) => (oid === 20 ? Number : pg.types.getTypeParser(oid, format)) } as pg.CustomTypesConfig });
    // A connection the server ends (a dropped database) must not take the test process down.
    client.on('error', () => {});
    await client.connect();
    all = async (sql, params) => {
      let n = 0;
      return (await client.query<Record<string, unknown>>(sql.replace(/\?/g, () => `$${++n}`), params)).rows;
    };
    close = () => client.end();
  } else {
    const db = new BetterSqlite3(join(dataDir, 'waymark.sqlite'), { readonly: true });
    all = async (sql, params) => db.prepare(sql).all(...params) as Array<Record<string, unknown>>;
    close = async () => {
      db.close();
    };
  }
  const rows: Rows = {
    all: async <R,>(sql: string, ...params: unknown[]) => (await all(sql, params)) as R[],
    get: async <R,>(sql: string, ...params: unknown[]) => (await all(sql, params))[0] as R | undefined,
    pluck: async <R,>(sql: string, ...params: unknown[]) => (await all(sql, params)).map((r) => Object.values(r)[0] as R),
    value: async <R,>(sql: string, ...params: unknown[]) => {
      const first = (await all(sql, params))[0];
      return (first === undefined ? undefined : Object.values(first)[0]) as R | undefined;
    },
  };
  return { rows, close };
}

/** Reads of the instance on `dataDir` (see openReader) on a connection opened for them and closed after. */
export async function readDb<T>(dataDir: string, fn: (db: Rows) => Promise<T>): Promise<T> {
  const reader = await openReader(dataDir);
  try {
    return await fn(reader.rows);
  } finally {
    await reader.close();
  }
}
