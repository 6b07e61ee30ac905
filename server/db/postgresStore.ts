/**
 * The PostgreSQL backend of the storage seam (the central tier: any number of processes on one
 * database). Kysely's PostgreSQL dialect over a `pg` pool; migrations from server/db/postgres/
 * applied at open under an advisory lock, so processes starting together apply each file once.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Schema } from './schema.ts';
import { type Executor, runCommitted, type Store, type TransactionOptions, TransactionScope } from './store.ts';

export const postgresMigrationsDir = join(import.meta.dirname, 'postgres');

/** pg_advisory_lock key of the migration runner ("waymark" in ASCII). */
const MIGRATION_LOCK = 0x7761796d61726bn;

const INT8 = 20;

export interface PostgresStoreOptions {
  /** Connections this process may hold (docs/deploy.md, pool sizing). */
  poolSize?: number;
  migrationsDir?: string;
  /** Name shown in pg_stat_activity. */
  applicationName?: string;
}

export class PostgresStore implements Store {
  readonly dialect = 'postgres' as const;
  readonly db: Executor;
  readonly pool: pg.Pool;
  private readonly scope = new TransactionScope();

  private constructor(pool: pg.Pool) {
    this.pool = pool;
    const scope = this.scope;
    const guarded = {
      connect: () => {
        scope.assertOutside();
        return pool.connect();
      },
      end: () => pool.end(),
    } as unknown as pg.Pool;
    // Transactions take their client through the same pool: the guard only refuses a root query
    // from inside a transaction's callback, which Kysely runs after taking the client.
    this.db = new Kysely<Schema>({ dialect: new PostgresDialect({ pool: guarded }) });
  }

  /** Connects, applies pending migrations under the advisory lock, and returns the store. */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      application_name: options.applicationName ?? 'waymark',
      // int8 (ids, counts, epoch milliseconds) as numbers: all stay far below 2^53.
      types: { getTypeParser: (oid: number, format?: string) => (oid === INT8 ? (v: string) => Number(v) : pg.types.getTypeParser(oid, format as 'text')) },
    });
    pool.on('error', () => {
      // An idle client lost its connection (server restart): the pool replaces it on next use.
    });
    try {
      await migratePostgres(pool, options.migrationsDir ?? postgresMigrationsDir);
    } catch (err) {
      await pool.end();
      throw err;
    }
    return new PostgresStore(pool);
  }

  async transaction<T>(fn: (tx: Executor) => Promise<T>, options: TransactionOptions = {}): Promise<T> {
    let committed: Array<() => void> = [];
    const result = await this.db.transaction().execute(async (tx) => {
      if (options.flush === 'deferred') await sql`SET LOCAL synchronous_commit = off`.execute(tx);
      const out = await this.scope.run(tx, fn);
      committed = out.committed;
      return out.result;
    });
    runCommitted(committed);
    return result;
  }

  afterCommit(tx: Executor, fn: () => void): void {
    this.scope.afterCommit(this.db, tx, fn);
  }

  onTransactionStart(hook: (tx: Executor) => Promise<void> | void): void {
    this.scope.onStart(hook);
  }

  async close(): Promise<void> {
    await this.db.destroy();
    // Kysely ends the pool only if it ever ran a query: a store used for migrations alone (or
    // never used) would keep its idle connections open until the pool's idle timeout.
    if (!this.pool.ended) await this.pool.end();
  }
}

/**
 * Applies every `NNN_name.sql` in `dir` not yet recorded in schema_migrations, in name order,
 * each in its own transaction, holding a session advisory lock for the whole run.
 */
export async function migratePostgres(pool: pg.Pool, dir: string = postgresMigrationsDir): Promise<string[]> {
  const client = await pool.connect();
  const ran: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK.toString()]);
    try {
      await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)');
      const applied = new Set((await client.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name));
      const files = readdirSync(dir).filter((f) => /^\d{3}_[\w-]+\.sql$/.test(f)).sort();
      for (const file of files) {
        if (applied.has(file)) continue;
        const sql = readFileSync(join(dir, file), 'utf8');
        await client.query('BEGIN');
        try {
          // The deferred triggers of 073 would otherwise leave events pending at a data change,
          // and an ALTER of that table later in the same file fails ("pending trigger events").
          await client.query('SET CONSTRAINTS ALL IMMEDIATE');
          await client.query(sql);
          await client.query('INSERT INTO schema_migrations (name, applied_at) VALUES ($1, $2)', [file, new Date().toISOString()]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw new Error(`PostgreSQL migration ${file} failed: ${(err as Error).message}`, { cause: err });
        }
        ran.push(file);
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK.toString()]);
    }
  } finally {
    client.release();
  }
  return ran;
}
