import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { openDatabase } from './database.ts';
import { SqliteStore } from './sqliteStore.ts';
import { isPostgresUrl, type Store } from './store.ts';

export interface OpenStoreOptions {
  /** The data directory: `<dataDir>/waymark.sqlite` unless `database` names PostgreSQL. */
  dataDir: string;
  /** `--database` / WAYMARK_DATABASE: a postgres:// URL (the central tier), or unset for SQLite. */
  database?: string | undefined;
  /** PostgreSQL connections this process may hold. */
  poolSize?: number | undefined;
}

export interface OpenedStore {
  store: Store;
  /** The SQLite connection behind the store (the scan path opens its own beside it); null on PostgreSQL. */
  sqlite: Database | null;
  /** Where the data lives, for the start-up banner (never the password). */
  location: string;
  close(): Promise<void>;
}

export function databaseFile(dataDir: string): string {
  return join(dataDir, 'waymark.sqlite');
}

/** Opens the instance's database, applying migrations: SQLite by default, PostgreSQL for a postgres:// URL. */
export async function openStore(options: OpenStoreOptions): Promise<OpenedStore> {
  if (options.database !== undefined && options.database !== '') {
    if (!isPostgresUrl(options.database)) throw new Error('--database must be a postgres:// or postgresql:// URL');
    // Loaded only here: the embedded default never pays for the PostgreSQL driver at start-up.
    const { PostgresStore } = await import('./postgresStore.ts');
    const store = await PostgresStore.open(options.database, { ...(options.poolSize ? { poolSize: options.poolSize } : {}) });
    return { store, sqlite: null, location: redactUrl(options.database), close: () => store.close() };
  }
  const file = databaseFile(options.dataDir);
  const sqlite = openDatabase(file);
  const store = new SqliteStore(sqlite);
  return {
    store,
    sqlite,
    location: file,
    close: async () => {
      await store.close();
      sqlite.close();
    },
  };
}

/** The URL without its password. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}
