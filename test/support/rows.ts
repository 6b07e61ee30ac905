/**
 * Raw rows of a running instance's database, on either backend, for tests that look behind the
 * API (a tombstone kept, nothing changed by a refused request). Statements are written once with
 * `?` placeholders; on PostgreSQL they become `$1, $2 …`.
 */
import { CompiledQuery } from 'kysely';
import type { Store } from '../../server/db/store.ts';

function compile(store: Store, text: string, params: readonly unknown[]): CompiledQuery {
  let n = 0;
  const sqlText = store.dialect === 'postgres' ? text.replace(/\?/g, () => `$${++n}`) : text;
  return CompiledQuery.raw(sqlText, [...params]);
}

/** Every row `text` returns. */
export async function rows<T = Record<string, unknown>>(store: Store, text: string, ...params: unknown[]): Promise<T[]> {
  return (await store.db.executeQuery<T>(compile(store, text, params))).rows;
}

/** The first column of the first row (a count, a flag), or undefined. */
export async function value<T = unknown>(store: Store, text: string, ...params: unknown[]): Promise<T | undefined> {
  const [first] = await rows<Record<string, unknown>>(store, text, ...params);
  return first === undefined ? undefined : (Object.values(first)[0] as T);
}

/** A count as a number on both backends (PostgreSQL's count(*) is a bigint). */
export async function count(store: Store, text: string, ...params: unknown[]): Promise<number> {
  return Number(await value(store, text, ...params));
}

/** Runs a statement that returns nothing. */
export async function run(store: Store, text: string, ...params: unknown[]): Promise<void> {
  await store.db.executeQuery(compile(store, text, params));
}

/**
 * Tables a snapshot leaves out: bookkeeping that a read legitimately changes, or that background
 * work moves on its own (the webhook fan-out's cursor passes events committed before the
 * snapshot whenever the fan-out gets to them: seen in CI on PostgreSQL, 7 → 12 across a refused
 * PATCH). The events themselves (`outbox_events`) are compared.
 */
const UNCOMPARED = new Set(['schema_migrations', 'api_keys', 'rate_limit_windows', 'password_attempts', 'webhook_claims', 'webhook_fanout_cursor']);

async function tableNames(store: Store): Promise<string[]> {
  const names =
    store.dialect === 'postgres'
      ? await rows<{ name: string }>(store, "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type IN ('BASE TABLE', 'UNLOGGED TABLE') ORDER BY table_name")
      : await rows<{ name: string }>(store, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name");
  return names.map((r) => r.name).filter((n) => !UNCOMPARED.has(n));
}

async function columns(store: Store, table: string): Promise<string[]> {
  const cols =
    store.dialect === 'postgres'
      ? await rows<{ name: string }>(store, 'SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position', table)
      : await rows<{ name: string }>(store, 'SELECT name FROM pragma_table_info(?)', table);
  return cols.map((c) => c.name);
}

/**
 * Every row of every table (core and feature tables alike), for before/after comparisons on one
 * backend. Rows are ordered by all their columns, so the order does not depend on the engine's
 * scan order. API keys change last_used_at on use, so only what matters of them is compared.
 */
export async function snapshotStore(store: Store, tables?: readonly string[]): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of tables ?? (await tableNames(store))) {
    const cols = (await columns(store, table)).map((c) => `"${c}"`).join(', ');
    out[table] = await rows(store, `SELECT ${cols} FROM "${table}" ORDER BY ${cols}`);
  }
  out.api_keys = await rows(store, 'SELECT id, org_id, name, plan, key_hash, revoked_at FROM api_keys ORDER BY id');
  return out;
}
