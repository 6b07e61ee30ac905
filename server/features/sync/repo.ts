import { sql } from 'kysely';
import type { SyncEntity } from '../../schemas/sync.ts';
import type { Dialect, Executor } from '../../db/store.ts';
import { BLOCK_SIZE } from '../slugs/index.ts';
import { conflictKey } from './conflicts.ts';

export interface SiteRow {
  site_id: string;
  org_id: string;
  name: string;
  created_at: string;
  last_seen_at: string;
}

export interface IncarnationRow {
  site_id: string;
  incarnation: string;
  token: string;
  created_at: string;
  last_seen_at: string;
}

export interface LeaseRow {
  block: number;
  org_id: string;
  site_id: string;
  incarnation: string;
  kind: 'lease' | 'claim';
  grant_token: string;
  leased_at: string;
}

export interface HeldBlock {
  block: number;
  next_offset: number;
  source: string;
}

export interface ConflictRow {
  id: number;
  kind: string;
  detail_json: string;
  detected_at: string;
  resolved_at: string | null;
}

const SITE_COLS = ['site_id', 'org_id', 'name', 'created_at', 'last_seen_at'] as const;
const INCARNATION_COLS = ['site_id', 'incarnation', 'token', 'created_at', 'last_seen_at'] as const;
const LEASE_COLS = ['block', 'org_id', 'site_id', 'incarnation', 'kind', 'grant_token', 'leased_at'] as const;
const CONFLICT_COLS = ['id', 'kind', 'detail_json', 'detected_at', 'resolved_at'] as const;

/** A transaction-scoped advisory lock on PostgreSQL (many processes); SQLite has one writer anyway. */
async function advisoryLock(db: Executor, dialect: Dialect, key: string): Promise<void> {
  if (dialect === 'postgres') await sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(db);
}

/** All SQL of the sync feature: remote-side registry, site-side lease state, settings. */
export class SyncRepo {
  readonly dialect: Dialect;

  constructor(dialect: Dialect) {
    this.dialect = dialect;
  }

  // ---- settings ----
  async getSetting(db: Executor, key: string): Promise<string | undefined> {
    return (await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst())?.value;
  }
  async setSetting(db: Executor, key: string, value: string): Promise<void> {
    await db
      .insertInto('settings')
      .values({ key, value })
      .onConflict((oc) => oc.column('key').doUpdateSet({ value: (eb) => eb.ref('excluded.value') }))
      .execute();
  }
  /** Stores `value` unless the key has one already (another process may have set it first); returns the stored value. */
  async ensureSetting(db: Executor, key: string, value: string): Promise<string> {
    await db.insertInto('settings').values({ key, value }).onConflict((oc) => oc.column('key').doNothing()).execute();
    return (await this.getSetting(db, key)) ?? value;
  }
  async deleteSetting(db: Executor, key: string): Promise<void> {
    await db.deleteFrom('settings').where('key', '=', key).execute();
  }
  /** Every `sync.*` setting (the site side keeps them in memory). */
  async syncSettings(db: Executor): Promise<Map<string, string>> {
    const rows = await db.selectFrom('settings').select(['key', 'value']).where('key', 'like', 'sync.%').execute();
    return new Map(rows.map((r) => [r.key, r.value]));
  }

  // ---- remote side ----
  /**
   * Serialises the calls of one site across processes (PostgreSQL): registration, leases and
   * pushes read and advance its fencing token and push state, which SQLite's single writer did.
   */
  lockSite(db: Executor, siteId: string): Promise<void> {
    return advisoryLock(db, this.dialect, `sync-site:${siteId}`);
  }
  async getSite(db: Executor, siteId: string): Promise<SiteRow | undefined> {
    return db.selectFrom('sync_sites').select(SITE_COLS).where('site_id', '=', siteId).executeTakeFirst();
  }
  async insertSite(db: Executor, row: SiteRow): Promise<void> {
    await db.insertInto('sync_sites').values(row).execute();
  }
  async touchSite(db: Executor, siteId: string, name: string, at: string): Promise<void> {
    await db.updateTable('sync_sites').set({ name, last_seen_at: at }).where('site_id', '=', siteId).execute();
  }
  async listSites(db: Executor, orgId: string): Promise<SiteRow[]> {
    return db.selectFrom('sync_sites').select(SITE_COLS).where('org_id', '=', orgId).orderBy('created_at', 'desc').orderBy('site_id').execute();
  }
  async getIncarnation(db: Executor, siteId: string, incarnation: string): Promise<IncarnationRow | undefined> {
    return db.selectFrom('sync_incarnations').select(INCARNATION_COLS).where('site_id', '=', siteId).where('incarnation', '=', incarnation).executeTakeFirst();
  }
  async insertIncarnation(db: Executor, row: IncarnationRow): Promise<void> {
    await db.insertInto('sync_incarnations').values(row).execute();
  }
  async advanceToken(db: Executor, siteId: string, incarnation: string, token: string, at: string): Promise<void> {
    await db.updateTable('sync_incarnations').set({ token, last_seen_at: at }).where('site_id', '=', siteId).where('incarnation', '=', incarnation).execute();
  }
  async listIncarnations(db: Executor, siteId: string): Promise<Array<{ incarnation: string; created_at: string; last_seen_at: string; blocks: number }>> {
    const rows = await db
      .selectFrom('sync_incarnations as i')
      .select((eb) => [
        'i.incarnation',
        'i.created_at',
        'i.last_seen_at',
        eb
          .selectFrom('sync_leases as l')
          .select((e) => e.fn.countAll<number>().as('n'))
          .whereRef('l.site_id', '=', 'i.site_id')
          .whereRef('l.incarnation', '=', 'i.incarnation')
          .as('blocks'),
      ])
      .where('i.site_id', '=', siteId)
      .orderBy('i.created_at')
      .orderBy('i.incarnation')
      .execute();
    return rows.map((r) => ({ ...r, blocks: Number(r.blocks) }));
  }
  async leaseOf(db: Executor, block: number): Promise<LeaseRow | undefined> {
    return (await db.selectFrom('sync_leases').select(LEASE_COLS).where('block', '=', block).executeTakeFirst()) as LeaseRow | undefined;
  }
  async insertLease(db: Executor, row: LeaseRow): Promise<void> {
    await db.insertInto('sync_leases').values(row).execute();
  }
  async leasesByGrant(db: Executor, siteId: string, incarnation: string, grantToken: string): Promise<number[]> {
    const rows = await db
      .selectFrom('sync_leases')
      .select('block')
      .where('site_id', '=', siteId)
      .where('incarnation', '=', incarnation)
      .where('grant_token', '=', grantToken)
      .where('kind', '=', 'lease')
      .orderBy('block')
      .execute();
    return rows.map((r) => r.block);
  }
  async leasesOfIncarnation(db: Executor, siteId: string, incarnation: string): Promise<number[]> {
    const rows = await db.selectFrom('sync_leases').select('block').where('site_id', '=', siteId).where('incarnation', '=', incarnation).orderBy('block').execute();
    return rows.map((r) => r.block);
  }
  /** A block this instance mints from itself (the remote's own blocks). */
  async isOwnBlock(db: Executor, block: number): Promise<boolean> {
    return (await db.selectFrom('slug_blocks').select('block').where('block', '=', block).executeTakeFirst()) !== undefined;
  }
  async orgIds(db: Executor): Promise<string[]> {
    const rows = await db.selectFrom('organizations').select('id').orderBy('created_at').orderBy('id').limit(2).execute();
    return rows.map((r) => r.id);
  }
  async orgName(db: Executor, orgId: string): Promise<string | undefined> {
    return (await db.selectFrom('organizations').select('name').where('id', '=', orgId).executeTakeFirst())?.name;
  }

  // ---- site side ----
  async heldBlocks(db: Executor): Promise<HeldBlock[]> {
    return db.selectFrom('slug_blocks').select(['block', 'next_offset', 'source']).orderBy('acquired_at').orderBy('block').execute();
  }
  async blockState(db: Executor, block: number): Promise<{ state: string; used: number | null } | undefined> {
    return db.selectFrom('sync_site_blocks').select(['state', 'used']).where('block', '=', block).executeTakeFirst();
  }
  /**
   * Blocks to claim when an incarnation registers: those taken locally (standalone) and those an
   * earlier incarnation retired (re-recorded at the remote in case it lost them; see docs/sync.md).
   */
  async claimableBlocks(db: Executor): Promise<number[]> {
    const rows = await db
      .selectFrom('slug_blocks')
      .select('block')
      .where((eb) =>
        eb.or([
          eb.and([
            eb('source', '=', 'local'),
            eb('block', 'not in', eb.selectFrom('sync_site_blocks').select('block').where('state', '=', 'dropped')),
          ]),
          eb('block', 'in', eb.selectFrom('sync_site_blocks').select('block').where('state', '=', 'retired')),
        ]),
      )
      .orderBy('block')
      .execute();
    return rows.map((r) => r.block);
  }
  async activeLeased(db: Executor): Promise<{ blocks: number; slugs: number }> {
    const row = await db
      .selectFrom('slug_blocks')
      .select((eb) => [eb.fn.countAll<number>().as('blocks'), sql<number>`COALESCE(SUM(${BLOCK_SIZE} - next_offset), 0)`.as('slugs')])
      .where('source', '=', 'lease')
      .where('next_offset', '<', BLOCK_SIZE)
      .executeTakeFirstOrThrow();
    return { blocks: Number(row.blocks), slugs: Number(row.slugs) };
  }
  async nextOffset(db: Executor, block: number): Promise<number | undefined> {
    return (await db.selectFrom('slug_blocks').select('next_offset').where('block', '=', block).executeTakeFirst())?.next_offset;
  }
  /** No more slugs from this block; returns how many it had given. */
  async exhaustBlock(db: Executor, block: number): Promise<number> {
    const used = (await this.nextOffset(db, block)) ?? 0;
    await db.updateTable('slug_blocks').set({ next_offset: BLOCK_SIZE }).where('block', '=', block).execute();
    return used;
  }
  async confirmLocalBlock(db: Executor, block: number): Promise<void> {
    await db.updateTable('slug_blocks').set({ source: 'lease' }).where('block', '=', block).execute();
  }
  async adoptLeasedBlock(db: Executor, block: number, at: string): Promise<void> {
    await db
      .insertInto('slug_blocks')
      .values({ block, next_offset: 0, source: 'lease', acquired_at: at })
      .onConflict((oc) => oc.column('block').doNothing())
      .execute();
  }
  async setBlockState(
    db: Executor,
    block: number,
    incarnation: string,
    state: 'leased' | 'dropped' | 'retired',
    used: number | null,
    reason: string | null,
    at: string,
  ): Promise<void> {
    await db
      .insertInto('sync_site_blocks')
      .values({ block, incarnation, state, used, reason, updated_at: at })
      .onConflict((oc) =>
        oc.column('block').doUpdateSet((eb) => ({
          incarnation: eb.ref('excluded.incarnation'),
          state: eb.ref('excluded.state'),
          used: eb.ref('excluded.used'),
          reason: eb.ref('excluded.reason'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute();
  }
  async openBlocks(db: Executor): Promise<Array<{ block: number; next_offset: number }>> {
    return db.selectFrom('slug_blocks').select(['block', 'next_offset']).where('next_offset', '<', BLOCK_SIZE).execute();
  }
  /**
   * `orgId` null: a conflict of the instance itself (a block conflict), shown to every organization.
   * One entry per conflict (`conflictKey`): a conflict logged again is skipped, and the remote's copy
   * of one this side logged itself (`remoteId`) gives that entry the remote's id and detail.
   */
  async insertConflict(db: Executor, kind: string, detail: Record<string, unknown>, at: string, orgId: string | null, remoteId: number | null = null): Promise<void> {
    const key = orgId === null ? null : conflictKey(kind, detail);
    const detailJson = JSON.stringify(detail);
    await db
      .insertInto('sync_conflicts')
      .values({ kind, detail_json: detailJson, detected_at: at, org_id: orgId, remote_id: remoteId, conflict_key: key })
      .onConflict((oc) => oc.columns(['org_id', 'conflict_key']).where('conflict_key', 'is not', null).doNothing())
      .execute();
    if (remoteId === null || key === null) return;
    await db
      .updateTable('sync_conflicts')
      .set({ remote_id: remoteId, detail_json: detailJson })
      .where('org_id', '=', orgId)
      .where('conflict_key', '=', key)
      .where('remote_id', 'is', null)
      .execute();
  }
  /** Site side: conflicts resolved here that the remote also logged and has not been told of. */
  async resolutionsToSend(db: Executor, orgId: string): Promise<Array<{ id: number; remote_id: number }>> {
    const rows = await db
      .selectFrom('sync_conflicts')
      .select(['id', 'remote_id'])
      .where('org_id', '=', orgId)
      .where('resolved_at', 'is not', null)
      .where('remote_id', 'is not', null)
      .where('remote_resolved_at', 'is', null)
      .orderBy('id')
      .execute();
    return rows.map((r) => ({ id: r.id, remote_id: r.remote_id! }));
  }
  /** Site side: conflicts still open here that the remote logged too (it may have resolved them). */
  async openWithRemoteId(db: Executor, orgId: string): Promise<Array<{ id: number; remote_id: number }>> {
    const rows = await db
      .selectFrom('sync_conflicts')
      .select(['id', 'remote_id'])
      .where('org_id', '=', orgId)
      .where('resolved_at', 'is', null)
      .where('remote_id', 'is not', null)
      .orderBy('id')
      .execute();
    return rows.map((r) => ({ id: r.id, remote_id: r.remote_id! }));
  }
  /** Site side: resolved at the remote, so resolved here, and nothing to tell the remote. */
  async resolvedByRemote(db: Executor, id: number, at: string): Promise<void> {
    await db.updateTable('sync_conflicts').set({ resolved_at: at, remote_resolved_at: at }).where('id', '=', id).where('resolved_at', 'is', null).execute();
  }
  async markResolvedAtRemote(db: Executor, id: number, at: string): Promise<void> {
    await db.updateTable('sync_conflicts').set({ remote_resolved_at: at }).where('id', '=', id).execute();
  }
  async resolveConflict(db: Executor, id: number, at: string, orgId: string): Promise<void> {
    await db
      .updateTable('sync_conflicts')
      .set((eb) => ({ resolved_at: eb.fn.coalesce('resolved_at', eb.val(at)) }))
      .where('id', '=', id)
      .where((eb) => eb.or([eb('org_id', '=', orgId), eb('org_id', 'is', null)]))
      .execute();
  }
  /** Remote side: conflicts found in `siteId`'s pushes after conflict `afterId` (sent down with the feed). */
  async conflictsForSite(db: Executor, orgId: string, siteId: string, afterId: number, limit: number): Promise<ConflictRow[]> {
    const site = this.dialect === 'postgres' ? sql<string>`(detail_json::jsonb ->> 'site_id')` : sql<string>`json_extract(detail_json, '$.site_id')`;
    return db
      .selectFrom('sync_conflicts')
      .select(CONFLICT_COLS)
      .where('org_id', '=', orgId)
      .where('id', '>', afterId)
      .where(site, '=', siteId)
      .orderBy('id')
      .limit(limit)
      .execute();
  }
  /** `orgId` undefined: every organization's (the instance's own view, e.g. the CLI). */
  async conflicts(db: Executor, orgId?: string): Promise<ConflictRow[]> {
    let q = db.selectFrom('sync_conflicts').select(CONFLICT_COLS);
    if (orgId !== undefined) q = q.where((eb) => eb.or([eb('org_id', '=', orgId), eb('org_id', 'is', null)]));
    return q.orderBy('id').execute();
  }
  /** Slugs that batches still waiting or generating will take from the reserve. */
  async pendingBatchDemand(db: Executor): Promise<number> {
    const row = await db
      .selectFrom('batches')
      .select(sql<number>`COALESCE(SUM(quantity - nodes_generated), 0)`.as('n'))
      .where('status', 'in', ['pending', 'generating'])
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}

export interface Version {
  hlc: string;
  writer: string;
}

export interface OutboxRow {
  seq: number;
  entity: SyncEntity;
  entity_id: string;
  op: 'upsert' | 'delete';
  fields: string;
  hlc: string;
  writer: string;
  group_id: string | null;
  hold: string | null;
}

export interface ScanRow {
  id: number;
  node_id: string;
  ts: number;
  device_type: string;
  os: string;
  browser: string | null;
  country: string | null;
  source: string;
  rule_id: string | null;
  outcome: string;
  is_bot: number;
  visitor_hash: string;
  /** The incarnation that recorded it (sync_scan_epochs), null before any epoch. */
  writer: string | null;
}

/** One outbox row as the compaction (prune.ts) sees it. */
export interface HistoryRow {
  seq: number;
  op: 'upsert' | 'delete';
  fields: string;
  hlc: string;
}

type Value = string | number | null;

const OUTBOX_COLS = ['seq', 'entity', 'entity_id', 'op', 'fields', 'hlc', 'writer', 'group_id', 'hold'] as const;

// Dynamic table access for the apply path: table and column names come from ENTITY_TABLES, never from the wire.
type AnyTable = 'nodes';
type AnyRow = Record<string, Value>;

/**
 * All SQL of push and pull: the change outbox (the site's queue, the remote's feed), versions and
 * tombstones, and the row writes of the apply path. Table and column names come from the fixed
 * entity list in apply.ts, never from the wire.
 */
export class ReplicationRepo {
  readonly dialect: Dialect;

  constructor(dialect: Dialect) {
    this.dialect = dialect;
  }

  /**
   * Runs `fn` in a savepoint (inside the caller's transaction): it is undone alone if it throws.
   * On PostgreSQL this also clears the aborted state an error leaves the transaction in.
   */
  async savepoint(db: Executor, fn: () => Promise<void>): Promise<void> {
    await sql`SAVEPOINT sync_apply`.execute(db);
    try {
      await fn();
    } catch (err) {
      await sql`ROLLBACK TO SAVEPOINT sync_apply`.execute(db);
      await sql`RELEASE SAVEPOINT sync_apply`.execute(db);
      throw err;
    }
    await sql`RELEASE SAVEPOINT sync_apply`.execute(db);
  }

  /**
   * PostgreSQL, many processes: an applied change reads versions and tombstones, then writes. The
   * entity is locked first (an advisory lock, which also covers an entity with no row, and its
   * row, so a local write in progress commits first and its versions are read), as SQLite's single
   * writer guaranteed. Locks taken in key order by `lockEntities` before a push avoid most deadlocks.
   */
  async lockEntity(db: Executor, entity: string, table: string, id: string, nodeId?: string): Promise<void> {
    if (this.dialect !== 'postgres') return;
    await advisoryLock(db, this.dialect, `sync-entity:${entity}:${id}`);
    await sql`SELECT 1 FROM ${sql.table(table)} WHERE id = ${id} FOR UPDATE`.execute(db);
    // A rule's node too: its delete takes the rule with it, and the rule's insert checks it.
    if (nodeId !== undefined) await sql`SELECT 1 FROM nodes WHERE id = ${nodeId} FOR UPDATE`.execute(db);
  }
  async lockEntities(db: Executor, keys: Array<{ entity: string; id: string }>): Promise<void> {
    if (this.dialect !== 'postgres') return;
    const sorted = [...new Set(keys.map((k) => `sync-entity:${k.entity}:${k.id}`))].sort();
    for (const key of sorted) await advisoryLock(db, this.dialect, key);
  }

  // ---- versions and tombstones ----
  async tombstone(db: Executor, entity: string, id: string): Promise<Version | undefined> {
    return db.selectFrom('sync_tombstones').select(['hlc', 'writer']).where('entity', '=', entity).where('entity_id', '=', id).executeTakeFirst();
  }
  /** `parentId`: a rule's node, so an earlier delete of the node finds the rule once its row is gone. */
  async addTombstone(db: Executor, entity: string, id: string, v: Version, parentId: string | null = null): Promise<void> {
    await db
      .insertInto('sync_tombstones')
      .values({ entity, entity_id: id, hlc: v.hlc, writer: v.writer, parent_id: parentId })
      .onConflict((oc) => oc.columns(['entity', 'entity_id']).doNothing())
      .execute();
  }
  /** An earlier delete arrived after a later one: the earliest is the delete everywhere. */
  async moveTombstone(db: Executor, entity: string, id: string, v: Version): Promise<void> {
    await db.updateTable('sync_tombstones').set({ hlc: v.hlc, writer: v.writer }).where('entity', '=', entity).where('entity_id', '=', id).execute();
  }
  async ruleTombstonesOf(db: Executor, nodeId: string): Promise<Array<Version & { id: string }>> {
    return db.selectFrom('sync_tombstones').select(['entity_id as id', 'hlc', 'writer']).where('entity', '=', 'rule').where('parent_id', '=', nodeId).execute();
  }
  /**
   * Feeds a delete that changed no row here (the entity was already gone) on to the other sides.
   * Called while the change is being applied (ChangeCapture.applying): the capture fills in the
   * change's writer and HLC as for the rows its triggers record (SQLite: the SQL functions of
   * db/capture.ts; PostgreSQL: the BEFORE INSERT trigger of migration 050).
   */
  async appendDelete(db: Executor, orgId: string, entity: string, id: string, fields: Record<string, unknown>): Promise<void> {
    if (this.dialect === 'postgres') {
      await db.insertInto('sync_outbox').values({ org_id: orgId, entity, entity_id: id, op: 'delete', fields: JSON.stringify(fields), hlc: '', writer: '', group_id: null, hold: null }).execute();
      return;
    }
    await sql`INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
              VALUES (${orgId}, ${entity}, ${id}, 'delete', ${JSON.stringify(fields)}, waymark_hlc(), waymark_writer(), waymark_group(), NULL, waymark_sync_applying(), waymark_sync_applying())`.execute(db);
  }
  /** A received edit that changed nothing here (kept so a delete that arrives later can log it). */
  async recordUnapplied(db: Executor, entity: string, id: string, v: Version, fields: Record<string, unknown>): Promise<void> {
    await db
      .insertInto('sync_unapplied')
      .values({ entity, entity_id: id, hlc: v.hlc, writer: v.writer, fields: JSON.stringify(fields) })
      .onConflict((oc) => oc.columns(['entity', 'entity_id', 'hlc', 'writer']).doNothing())
      .execute();
  }
  /** The stored version of each field of an entity that has one (one statement per change, not per field). */
  async versions(db: Executor, entity: string, id: string): Promise<Map<string, Version>> {
    const rows = await db.selectFrom('sync_versions').select(['field', 'hlc', 'writer']).where('entity', '=', entity).where('entity_id', '=', id).execute();
    return new Map(rows.map((r) => [r.field, { hlc: r.hlc, writer: r.writer }]));
  }
  /**
   * Every edit of an entity made after `v` that this side received, applied (its upserts in the
   * outbox) or not (sync_unapplied, migration 059), in HLC order.
   */
  async editsAfter(db: Executor, entity: string, id: string, v: Version): Promise<Array<Version & { fields: Record<string, Value> }>> {
    const after = sql<boolean>`(hlc > ${v.hlc} OR (hlc = ${v.hlc} AND writer > ${v.writer}))`;
    const rows = await db
      .selectFrom('sync_outbox')
      .select(['hlc', 'writer', 'fields'])
      .where('entity', '=', entity)
      .where('entity_id', '=', id)
      .where('op', '=', 'upsert')
      .where(after)
      .unionAll(db.selectFrom('sync_unapplied').select(['hlc', 'writer', 'fields']).where('entity', '=', entity).where('entity_id', '=', id).where(after))
      .orderBy('hlc')
      .orderBy('writer')
      .execute();
    return rows.map((r) => ({ hlc: r.hlc, writer: r.writer, fields: JSON.parse(r.fields) as Record<string, Value> }));
  }
  /** Records the version of each of `fields` unless the stored one is newer (one statement for all). */
  async setVersions(db: Executor, entity: string, id: string, fields: readonly string[], v: Version): Promise<void> {
    if (fields.length === 0) return;
    await db
      .insertInto('sync_versions')
      .values(fields.map((field) => ({ entity, entity_id: id, field, hlc: v.hlc, writer: v.writer })))
      .onConflict((oc) =>
        oc
          .columns(['entity', 'entity_id', 'field'])
          .doUpdateSet((eb) => ({ hlc: eb.ref('excluded.hlc'), writer: eb.ref('excluded.writer') }))
          .where(sql<boolean>`excluded.hlc > sync_versions.hlc OR (excluded.hlc = sync_versions.hlc AND excluded.writer > sync_versions.writer)`),
      )
      .execute();
  }

  // ---- rows of the apply path ----
  /** The organization of an entity row (a rule's is its node's; '' if that node is gone); undefined: no row. */
  async orgOf(db: Executor, entity: string, table: string, id: string): Promise<string | undefined> {
    if (entity === 'rule') {
      const rule = await db.selectFrom('rules').select('node_id').where('id', '=', id).executeTakeFirst();
      return rule === undefined ? undefined : ((await this.nodeOrg(db, rule.node_id)) ?? '');
    }
    const row = await db
      .selectFrom(table as AnyTable)
      .select('org_id')
      .where('id', '=', id)
      .executeTakeFirst();
    return row?.org_id;
  }
  /** The node of an existing rule. */
  async ruleNode(db: Executor, ruleId: string): Promise<string | undefined> {
    return (await db.selectFrom('rules').select('node_id').where('id', '=', ruleId).executeTakeFirst())?.node_id;
  }
  /** The rules of a node (they go with it when it is deleted). */
  async ruleIdsOf(db: Executor, nodeId: string): Promise<string[]> {
    return (await db.selectFrom('rules').select('id').where('node_id', '=', nodeId).execute()).map((r) => r.id);
  }
  async nodeOrg(db: Executor, nodeId: string): Promise<string | undefined> {
    return (await db.selectFrom('nodes').select('org_id').where('id', '=', nodeId).executeTakeFirst())?.org_id;
  }
  async insertRow(db: Executor, table: string, row: AnyRow): Promise<void> {
    await db
      .insertInto(table as AnyTable)
      .values(row as never)
      .execute();
  }
  async updateRow(db: Executor, table: string, id: string, set: AnyRow): Promise<void> {
    await db
      .updateTable(table as AnyTable)
      .set(set as never)
      .where('id', '=', id)
      .execute();
  }
  async deleteRow(db: Executor, table: string, id: string): Promise<void> {
    await db
      .deleteFrom(table as AnyTable)
      .where('id', '=', id)
      .execute();
  }
  async slugHolder(db: Executor, slug: string): Promise<string | undefined> {
    return (await db.selectFrom('slugs').select('node_id').where('slug', '=', slug).executeTakeFirst())?.node_id;
  }
  async insertSlug(db: Executor, slug: string, orgId: string, nodeId: string, at: string): Promise<void> {
    await db.insertInto('slugs').values({ slug, org_id: orgId, node_id: nodeId, minted_at: at }).execute();
  }
  /** The slug stays tombstoned, also where its node never arrived. The earliest deletion time wins. */
  async tombstoneSlug(db: Executor, slug: string, orgId: string, nodeId: string, at: string): Promise<void> {
    await db
      .insertInto('slugs')
      .values({ slug, org_id: orgId, node_id: nodeId, minted_at: at, deleted_at: at })
      .onConflict((oc) => oc.column('slug').doNothing())
      .execute();
    await db
      .updateTable('slugs')
      .set({ deleted_at: sql<string>`CASE WHEN deleted_at IS NULL OR deleted_at > ${at} THEN ${at} ELSE deleted_at END` })
      .where('slug', '=', slug)
      .execute();
  }
  /** Another node of the organization with this serial (the first made), if any. */
  async serialHolder(db: Executor, orgId: string, serial: Value, nodeId: string): Promise<string | undefined> {
    // Two pushes applying the same serial at once (PostgreSQL) would each miss the other's node:
    // the second waits for the first to commit, then sees it.
    await advisoryLock(db, this.dialect, `sync-serial:${orgId}:${String(serial)}`);
    const row = await db
      .selectFrom('nodes')
      .select('id')
      .where('org_id', '=', orgId)
      .where('serial', '=', serial as string)
      .where('id', '<>', nodeId)
      .orderBy('created_at')
      .orderBy('id')
      .limit(1)
      .executeTakeFirst();
    return row?.id;
  }
  async templateExists(db: Executor, id: Value): Promise<boolean> {
    return (await db.selectFrom('templates').select('id').where('id', '=', String(id)).executeTakeFirst()) !== undefined;
  }
  async batchExists(db: Executor, id: Value): Promise<boolean> {
    return (await db.selectFrom('batches').select('id').where('id', '=', String(id)).executeTakeFirst()) !== undefined;
  }
  async batchStatus(db: Executor, id: string): Promise<string | undefined> {
    return (await db.selectFrom('batches').select('status').where('id', '=', id).executeTakeFirst())?.status;
  }
  async maxEventSeq(db: Executor): Promise<number> {
    const row = await db.selectFrom('outbox_events').select((eb) => eb.fn.max('seq').as('m')).executeTakeFirst();
    return Number(row?.m ?? 0);
  }
  /** Inserts a pushed scan unless its global id is stored already; returns its local id, or null. */
  async insertScan(db: Executor, orgId: string, s: Omit<ScanRow, 'id' | 'writer'> & { id: string }): Promise<number | null> {
    const row = await db
      .insertInto('scan_events')
      .values({
        node_id: s.node_id,
        org_id: orgId,
        ts: s.ts,
        device_type: s.device_type,
        os: s.os,
        browser: s.browser,
        country: s.country,
        source: s.source,
        rule_id: s.rule_id,
        outcome: s.outcome,
        is_bot: s.is_bot,
        visitor_hash: s.visitor_hash,
        sync_id: s.id,
      })
      .onConflict((oc) => oc.column('sync_id').where('sync_id', 'is not', null).doNothing())
      .returning('id')
      .executeTakeFirst();
    return row === undefined ? null : Number(row.id);
  }

  // ---- site side: the queue ----
  // A site pushes only its bound organization's rows (another local organization is not paired).
  async pendingCount(db: Executor, orgId: string): Promise<number> {
    const row = await db
      .selectFrom('sync_outbox')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('pushed', '=', 0)
      .where('org_id', '=', orgId)
      .where('seq', '>', 0)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
  async pending(db: Executor, orgId: string, limit: number): Promise<OutboxRow[]> {
    return (await db
      .selectFrom('sync_outbox')
      .select(OUTBOX_COLS)
      .where('pushed', '=', 0)
      .where('org_id', '=', orgId)
      .where('seq', '>', 0)
      .orderBy('seq')
      .limit(limit)
      .execute()) as OutboxRow[];
  }
  /** The last pending seq of a transaction group or of a batch's rows. */
  async pendingEnd(db: Executor, by: 'group' | 'hold', key: string): Promise<number> {
    const row = await db
      .selectFrom('sync_outbox')
      .select((eb) => eb.fn.max('seq').as('m'))
      .where(by === 'group' ? 'group_id' : 'hold', '=', key)
      .where('pushed', '=', 0)
      .executeTakeFirst();
    return Number(row?.m ?? 0);
  }
  async pendingBetween(db: Executor, after: number, upTo: number, orgId: string): Promise<OutboxRow[]> {
    return (await db
      .selectFrom('sync_outbox')
      .select(OUTBOX_COLS)
      .where('seq', '>', after)
      .where('seq', '<=', upTo)
      .where('pushed', '=', 0)
      .where('org_id', '=', orgId)
      .orderBy('seq')
      .execute()) as OutboxRow[];
  }
  /** Logged changes of one entity after `after`, oldest first (the one-off sealing of webhook secrets). */
  async changesOf(db: Executor, entity: string, after: number, limit: number): Promise<Array<{ seq: number; entity_id: string; fields: string }>> {
    return db
      .selectFrom('sync_outbox')
      .select(['seq', 'entity_id', 'fields'])
      .where('entity', '=', entity)
      .where('seq', '>', after)
      .orderBy('seq')
      .limit(limit)
      .execute();
  }
  async setChangeFields(db: Executor, seq: number, fields: string): Promise<void> {
    await db.updateTable('sync_outbox').set({ fields }).where('seq', '=', seq).execute();
  }
  async markPushed(db: Executor, upTo: number): Promise<void> {
    await db.updateTable('sync_outbox').set({ pushed: 1 }).where('pushed', '=', 0).where('seq', '>', 0).where('seq', '<=', upTo).execute();
  }
  /** This site's own rows after `seq` are pending again (API keys and pulled rows never are). */
  async rewind(db: Executor, after: number): Promise<void> {
    await db.updateTable('sync_outbox').set({ pushed: 0 }).where('pulled', '=', 0).where('entity', '<>', 'api_key').where('seq', '>', after).execute();
  }
  async scansAfter(db: Executor, after: number, orgId: string, limit: number): Promise<ScanRow[]> {
    const rows = await db
      .selectFrom('scan_events')
      .select((eb) => [
        'id',
        'node_id',
        'ts',
        'device_type',
        'os',
        'browser',
        'country',
        'source',
        'rule_id',
        'outcome',
        'is_bot',
        'visitor_hash',
        eb
          .selectFrom('sync_scan_epochs')
          .select('writer')
          .where('first_id', '<=', eb.ref('scan_events.id'))
          .orderBy('first_id', 'desc')
          .limit(1)
          .as('writer'),
      ])
      .where('id', '>', after)
      .where('sync_id', 'is', null)
      .where('org_id', '=', orgId)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows as ScanRow[];
  }
  async maxScanId(db: Executor): Promise<number> {
    const row = await db.selectFrom('scan_events').select((eb) => eb.fn.max('id').as('m')).executeTakeFirst();
    return Number(row?.m ?? 0);
  }
  async setScanEpoch(db: Executor, firstId: number, writer: string): Promise<void> {
    await db
      .insertInto('sync_scan_epochs')
      .values({ first_id: firstId, writer })
      .onConflict((oc) => oc.column('first_id').doUpdateSet({ writer: (eb) => eb.ref('excluded.writer') }))
      .execute();
  }
  async hasScanEpoch(db: Executor): Promise<boolean> {
    return (await db.selectFrom('sync_scan_epochs').select('first_id').limit(1).executeTakeFirst()) !== undefined;
  }

  // ---- remote side: push state and the feed ----
  async pushState(db: Executor, siteId: string, incarnation: string): Promise<number | undefined> {
    return (await db.selectFrom('sync_push_state').select('last_seq').where('site_id', '=', siteId).where('incarnation', '=', incarnation).executeTakeFirst())?.last_seq;
  }
  async setPushState(db: Executor, siteId: string, incarnation: string, lastSeq: number): Promise<void> {
    await db
      .insertInto('sync_push_state')
      .values({ site_id: siteId, incarnation, last_seq: lastSeq })
      .onConflict((oc) => oc.columns(['site_id', 'incarnation']).doUpdateSet({ last_seq: (eb) => eb.ref('excluded.last_seq') }))
      .execute();
  }
  /**
   * The feed is read by seq. On PostgreSQL seq is commit order (migration 050, sync_outbox_seal),
   * so once a row is visible every row before it is too: a cursor never passes a row that commits later.
   */
  async feedHead(db: Executor, orgId: string): Promise<number> {
    const row = await db.selectFrom('sync_outbox').select((eb) => eb.fn.max('seq').as('m')).where('org_id', '=', orgId).executeTakeFirst();
    return Number(row?.m ?? 0);
  }
  async feedAfter(db: Executor, after: number, orgId: string, limit: number): Promise<OutboxRow[]> {
    return (await db.selectFrom('sync_outbox').select(OUTBOX_COLS).where('seq', '>', after).where('org_id', '=', orgId).orderBy('seq').limit(limit).execute()) as OutboxRow[];
  }
  async groupEnd(db: Executor, groupId: string): Promise<number> {
    const row = await db.selectFrom('sync_outbox').select((eb) => eb.fn.max('seq').as('m')).where('group_id', '=', groupId).executeTakeFirst();
    return Number(row?.m ?? 0);
  }
  async feedBetween(db: Executor, after: number, upTo: number, orgId: string): Promise<OutboxRow[]> {
    return (await db
      .selectFrom('sync_outbox')
      .select(OUTBOX_COLS)
      .where('seq', '>', after)
      .where('seq', '<=', upTo)
      .where('org_id', '=', orgId)
      .orderBy('seq')
      .execute()) as OutboxRow[];
  }

  // ---- compaction (prune.ts) ----
  /** Outbox rows after `after` in seq order, for the compaction's pass. */
  async outboxAfter(db: Executor, after: number, limit: number): Promise<Array<{ seq: number; entity: string; entity_id: string; hlc: string }>> {
    return db.selectFrom('sync_outbox').select(['seq', 'entity', 'entity_id', 'hlc']).where('seq', '>', after).orderBy('seq').limit(limit).execute();
  }
  /** An entity's whole history here, in seq order. */
  async history(db: Executor, entity: string, id: string): Promise<HistoryRow[]> {
    return (await db
      .selectFrom('sync_outbox')
      .select(['seq', 'op', 'fields', 'hlc'])
      .where('entity', '=', entity)
      .where('entity_id', '=', id)
      .where('seq', '>', 0)
      .orderBy('seq')
      .execute()) as HistoryRow[];
  }
  async deleteOutboxRows(db: Executor, seqs: number[]): Promise<void> {
    for (let i = 0; i < seqs.length; i += 500) await db.deleteFrom('sync_outbox').where('seq', 'in', seqs.slice(i, i + 500)).execute();
  }
  /** Up to `limit` received-but-unapplied edits older than `hlc` (kept only as history for the conflict log); returns how many it found. */
  async pruneUnapplied(db: Executor, hlc: string, limit: number): Promise<number> {
    const keys = await db.selectFrom('sync_unapplied').select(['entity', 'entity_id', 'hlc', 'writer']).where('hlc', '<', hlc).limit(limit).execute();
    for (const k of keys) {
      await db
        .deleteFrom('sync_unapplied')
        .where('entity', '=', k.entity)
        .where('entity_id', '=', k.entity_id)
        .where('hlc', '=', k.hlc)
        .where('writer', '=', k.writer)
        .execute();
    }
    return keys.length;
  }
}
