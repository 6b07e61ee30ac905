/**
 * `waymark migrate --from-data DIR --database URL`: moves an instance from its SQLite file to an
 * empty PostgreSQL database, losing nothing (docs/deploy.md, "Moving a SQLite remote to
 * PostgreSQL"). Every table is copied row for row, ids, sequence numbers and SQLite's rowid
 * included, in one PostgreSQL transaction: tombstoned slugs, leases, sync cursors, incarnation
 * tokens and the conflict log come along, so paired sites carry on without pairing again.
 *
 * Triggers are off for the copy (the rows are history, not new changes: change capture must not
 * record them again, nor the scan cache count them), and identity sequences continue after the
 * largest copied value, so no id is handed out twice.
 */
import type { Database } from 'better-sqlite3';
import type pg from 'pg';

export interface CopyReport {
  tables: Array<{ table: string; rows: number }>;
  rows: number;
}

/** Tables in an order that satisfies every foreign key (parents first). */
export const COPY_ORDER = [
  'organizations',
  'organization_settings',
  'api_keys',
  'templates',
  'batches',
  'nodes',
  'node_counts',
  'rules',
  'slugs',
  'slug_blocks',
  'serial_counters',
  'settings',
  'scan_events',
  'scan_events_by_node',
  'scan_rollups',
  'scan_org_rollups',
  'scan_org_day_rollups',
  'scan_node_days',
  'scan_rollup_state',
  'scan_visitor_days',
  'scan_visitor_hours',
  'scan_rule_visitor_hours',
  'scan_org_visitor_days',
  'scan_org_days',
  'scan_salt',
  'scan_cache_epoch',
  'outbox_events',
  'webhooks',
  'webhook_deliveries',
  'webhook_attempts',
  'webhook_fanout_cursor',
  'nfc_sessions',
  'nfc_session_items',
  'nfc_writes',
  // Tap proofs (migration 074): the counters must come along, or copied URLs would verify again.
  'tap_proof_tags',
  'tap_proof_policies',
  'printer_profiles',
  'sync_sites',
  'sync_incarnations',
  'sync_leases',
  'sync_site_blocks',
  'sync_outbox',
  'sync_versions',
  'sync_tombstones',
  'sync_unapplied',
  'sync_push_state',
  'sync_scan_epochs',
  'sync_conflicts',
] as const;

/**
 * Tables SQLite keeps for itself or the migration runners keep per database, and the state of
 * running processes (webhook sender claims, this minute's rate-limit budgets, password attempts of
 * the current windows): the copy is made from a stopped instance, and its processes start with
 * none.
 */
const NOT_COPIED = new Set(['sqlite_sequence', 'schema_migrations', 'webhook_claims', 'rate_limit_windows', 'password_attempts']);

const ROWS_PER_INSERT = 500;

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

export class CopyError extends Error {}

/**
 * Copies every table of `sqlite` into the PostgreSQL database behind `pool` (schema already
 * migrated). Refuses a target that already holds an organization.
 */
export async function copySqliteToPostgres(sqlite: Database, pool: pg.Pool): Promise<CopyReport> {
  const sqliteTables = (sqlite.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[])
    .filter((t) => !NOT_COPIED.has(t));
  const unknown = sqliteTables.filter((t) => !(COPY_ORDER as readonly string[]).includes(t));
  if (unknown.length > 0) throw new CopyError(`Tables this version does not know how to copy: ${unknown.join(', ')}`);

  const client = await pool.connect();
  const report: CopyReport = { tables: [], rows: 0 };
  try {
    await client.query('BEGIN');
    const existing = await client.query<{ n: string }>('SELECT COUNT(*) AS n FROM organizations');
    if (Number(existing.rows[0]!.n) > 0) throw new CopyError('The PostgreSQL database already holds data: migrate into an empty database');

    for (const table of COPY_ORDER) {
      if (!sqliteTables.includes(table)) continue;
      const target = await client.query<{ column_name: string; is_identity: string; identity_generation: string | null }>(
        `SELECT column_name, is_identity, identity_generation FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name = $1`,
        [table],
      );
      if (target.rows.length === 0) throw new CopyError(`Table ${table} is missing on PostgreSQL: is its schema older than this version?`);
      const pgColumns = new Map(target.rows.map((r) => [r.column_name, r]));
      const sqliteColumns = (sqlite.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(table) as string[]).filter((c) => pgColumns.has(c));
      // SQLite's implicit rowid becomes PostgreSQL's rowid identity column, keeping the order.
      const withRowid = pgColumns.has('rowid');
      const columns = withRowid ? ['rowid', ...sqliteColumns] : sqliteColumns;
      const select = `SELECT ${withRowid ? 'rowid AS rowid, ' : ''}${sqliteColumns.map(quote).join(', ')} FROM ${quote(table)} ORDER BY ${withRowid ? 'rowid' : '1'}`;

      await client.query(`ALTER TABLE ${quote(table)} DISABLE TRIGGER USER`);
      // Rows a migration seeded (singletons such as the scan cache epoch) give way to the copy.
      await client.query(`DELETE FROM ${quote(table)}`);
      const overriding = [...pgColumns.values()].some((c) => c.identity_generation === 'ALWAYS') ? ' OVERRIDING SYSTEM VALUE' : '';
      let count = 0;
      let chunk: unknown[][] = [];
      const flush = async () => {
        if (chunk.length === 0) return;
        const values: unknown[] = [];
        const tuples = chunk.map((row) => `(${row.map((v) => {
          values.push(v);
          return `$${values.length}`;
        }).join(', ')})`);
        await client.query(`INSERT INTO ${quote(table)} (${columns.map(quote).join(', ')})${overriding} VALUES ${tuples.join(', ')}`, values);
        count += chunk.length;
        chunk = [];
      };
      for (const row of sqlite.prepare(select).raw().iterate() as IterableIterator<unknown[]>) {
        chunk.push(row.map((v) => (typeof v === 'bigint' ? Number(v) : v)));
        if (chunk.length * columns.length >= ROWS_PER_INSERT * 8 || chunk.length >= ROWS_PER_INSERT) await flush();
      }
      await flush();
      await client.query(`ALTER TABLE ${quote(table)} ENABLE TRIGGER USER`);

      // Identity columns continue after the largest copied value.
      for (const column of pgColumns.values()) {
        if (column.is_identity !== 'YES') continue;
        await client.query(
          `SELECT setval(pg_get_serial_sequence($1, $2), GREATEST(COALESCE((SELECT MAX(${quote(column.column_name)}) FROM ${quote(table)}), 0), 1), (SELECT COUNT(*) > 0 FROM ${quote(table)}))`,
          [table, column.column_name],
        );
      }
      report.tables.push({ table, rows: count });
      report.rows += count;
    }
    // Change capture's own sequence and clock (migration 050) continue after the copied history.
    await client.query('SELECT waymark_sync_resume()');
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
  return report;
}
