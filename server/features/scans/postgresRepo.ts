/**
 * The scan path's SQL on PostgreSQL (the SQLite scan path keeps its hand-written synchronous
 * statements, repo.ts and writer.ts): resolution reads for the shared cache, the day's salt, and
 * the group commit's statements. Stateless; every method takes the executor first.
 */
import type { Executor } from '../../db/store.ts';
import type { NodeRowForScan, RuleRowForScan, ScanEventInsert } from './repo.ts';

export interface OutboxInsert {
  id: string;
  org_id: string;
  type: string;
  data_json: string;
  created_at: string;
}

export class PostgresScanRepo {
  async cacheEpoch(db: Executor): Promise<number> {
    const row = await db.selectFrom('scan_cache_epoch').select('epoch').where('id', '=', 1).executeTakeFirstOrThrow();
    return Number(row.epoch);
  }

  async nodesBySlug(db: Executor, slugs: readonly string[]): Promise<NodeRowForScan[]> {
    const rows = await db
      .selectFrom('nodes')
      .select(['id', 'org_id', 'slug', 'function_type', 'payload_json', 'status', 'scan_count', 'expires_at', 'max_scans', 'password_hash', 'after_limit_json'])
      .where('slug', 'in', [...slugs])
      .execute();
    return rows.map((r) => ({ ...r, scan_count: Number(r.scan_count), max_scans: r.max_scans === null ? null : Number(r.max_scans) }));
  }

  /** The node's scan_count as stored (undefined: no such node). */
  async scanCountOf(db: Executor, nodeId: string): Promise<number | undefined> {
    const row = await db.selectFrom('nodes').select('scan_count').where('id', '=', nodeId).executeTakeFirst();
    return row === undefined ? undefined : Number(row.scan_count);
  }

  /** Every rule of these nodes (the resolver orders them itself, rules.ts orderRules). */
  async rulesOf(db: Executor, nodeIds: readonly string[]): Promise<Array<RuleRowForScan & { node_id: string }>> {
    const rows = await db
      .selectFrom('rules')
      .select(['node_id', 'id', 'rule_type', 'conditions_json', 'function_type', 'payload_json', 'priority', 'enabled', 'created_at'])
      .where('node_id', 'in', [...nodeIds])
      .execute();
    return rows.map((r) => ({ ...r, priority: Number(r.priority), enabled: Number(r.enabled) }));
  }

  /** Minted slugs among these: slug → its tombstone time (null while its node exists). */
  async mintedSlugs(db: Executor, slugs: readonly string[]): Promise<Map<string, string | null>> {
    const rows = await db.selectFrom('slugs').select(['slug', 'deleted_at']).where('slug', 'in', [...slugs]).execute();
    return new Map(rows.map((r) => [r.slug, r.deleted_at]));
  }

  /**
   * The salt of `day`, the same in every process: the first to ask stores `fresh` (replacing an
   * older day's), the others get what it stored. Never goes back to an older day's salt (a clock
   * step backwards keeps the newer day's).
   */
  async saltFor(db: Executor, day: string, fresh: string): Promise<string> {
    const stored = await db
      .insertInto('scan_salt')
      .values({ id: 1, day, salt: fresh })
      .onConflict((oc) =>
        oc
          .column('id')
          .doUpdateSet({ day: (eb) => eb.ref('excluded.day'), salt: (eb) => eb.ref('excluded.salt') })
          .where('scan_salt.day', '<', day),
      )
      .returning('salt')
      .executeTakeFirst();
    if (stored) return stored.salt;
    return (await db.selectFrom('scan_salt').select('salt').where('id', '=', 1).executeTakeFirstOrThrow()).salt;
  }

  /**
   * One multi-row INSERT; returns the ids in the rows' order. PostgreSQL returns the rows of an
   * INSERT … VALUES in the order of the list (as bulk inserts elsewhere rely on); the node ids are
   * compared to be sure: a mismatch fails the batch instead of giving a scan another's id.
   */
  async insertScans(tx: Executor, rows: readonly ScanEventInsert[]): Promise<number[]> {
    const inserted = await tx.insertInto('scan_events').values([...rows]).returning(['id', 'node_id']).execute();
    if (inserted.length !== rows.length || inserted.some((r, i) => r.node_id !== rows[i]?.node_id)) {
      throw new Error('scan_events: the inserted rows came back in another order');
    }
    return inserted.map((r) => Number(r.id));
  }

  async insertOutbox(tx: Executor, rows: readonly OutboxInsert[]): Promise<void> {
    if (rows.length > 0) await tx.insertInto('outbox_events').values([...rows]).execute();
  }
}
