import { sql } from 'kysely';
import type { Dialect, Executor } from './store.ts';

/**
 * Whether this transaction got the lock named `key`: a transaction-scoped advisory lock on
 * PostgreSQL, where another process may hold it; always on SQLite, whose one writer is the lock.
 */
export async function tryTransactionLock(db: Executor, dialect: Dialect, key: string): Promise<boolean> {
  if (dialect !== 'postgres') return true;
  const r = await sql<{ ok: boolean }>`SELECT pg_try_advisory_xact_lock(hashtextextended(${key}, 0)) AS ok`.execute(db);
  return r.rows[0]?.ok === true;
}
