/**
 * Roll-ups and analytics queries, on both dialects (Kysely; `sql` where the builder cannot say it).
 *
 * The fold is set-based: a chunk of new scan events is a range of rows, and each table it fills
 * gets one INSERT … SELECT over that range (roll-ups, the per-node order, the visitor sets, the
 * per-rule visitor sets of split tests), so no event passes through JavaScript. What a chunk is differs:
 * - SQLite has one writer, so commit order is id order: the next `max` ids after the watermark.
 * - PostgreSQL has many: ids are handed out at INSERT and committed in any order, so a chunk is the
 *   next `max` rows in (transaction id, id) order among rows of transactions older than the oldest
 *   still running (pg_snapshot_xmin), a set no commit can add to any more. The watermark is the
 *   pair (last_xid, last_event), and the fold locks the state row: several processes folding at
 *   once take turns, and every event is folded exactly once (postgres/064_scans_many_processes.sql).
 */
import { type AliasedSelectQueryBuilder, type SqlBool, sql } from 'kysely';
import type { Dialect, Executor } from '../../db/store.ts';
import type { ScanEventRow } from './repo.ts';

export const DIMENSIONS = ['device_type', 'os', 'browser', 'country', 'source', 'rule', 'outcome'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

export interface Scope {
  kind: 'node' | 'org';
  id: string;
}

export type BotFilter = 'exclude' | 'include' | 'only';

export interface FoldResult {
  /** Events folded by this chunk. */
  read: number;
  /** PostgreSQL: the transaction horizon the chunk stopped at (every older transaction was done). */
  horizon: bigint | null;
}

/** A roll-up row to sum: the first hour it covers, a dimension's value, its scans. */
interface RollupRow {
  dim: string;
  hour: number;
  value: string;
  scans: number;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** The dimensions a scan is counted under, '' being the total (one pass over a chunk). */
const DIMS = sql`(SELECT '' AS dim UNION ALL SELECT 'device_type' UNION ALL SELECT 'os' UNION ALL SELECT 'browser'
  UNION ALL SELECT 'country' UNION ALL SELECT 'source' UNION ALL SELECT 'rule' UNION ALL SELECT 'outcome')`;

/** A scan's value under dimension `d.dim` (joined with DIMS), '' for unknown and for the total. */
const VALUE_OF_DIM = sql`CASE d.dim WHEN '' THEN '' WHEN 'device_type' THEN e.device_type WHEN 'os' THEN e.os
  WHEN 'browser' THEN coalesce(e.browser, '') WHEN 'country' THEN coalesce(e.country, '')
  WHEN 'source' THEN e.source WHEN 'rule' THEN coalesce(e.rule_id, '') ELSE e.outcome END`;

const EVENT_COLUMNS = ['e.id', 'e.node_id', 'e.org_id', 'e.ts', 'e.device_type', 'e.os', 'e.browser', 'e.country', 'e.source', 'e.rule_id', 'e.outcome', 'e.is_bot', 'e.visitor_hash'] as const;

export class AnalyticsRepo {
  private readonly dialect: Dialect;

  constructor(dialect: Dialect) {
    this.dialect = dialect;
  }

  // ---- the fold --------------------------------------------------------------------------------

  /** Scan events not folded yet (on PostgreSQL an estimate by id, enough to pace the background fold). */
  async backlog(db: Executor): Promise<number> {
    const row = await db
      .selectFrom('scan_events')
      .select((eb) => eb(eb.fn.coalesce(eb.fn.max('id'), eb.lit(0)), '-', eb.selectFrom('scan_rollup_state').select('last_event').where('id', '=', 1)).as('n'))
      .executeTakeFirstOrThrow();
    return Math.max(0, Number(row.n));
  }

  /**
   * Folds up to `max` new scan events into the roll-ups, the visitor sets and the per-node order
   * (scan_events_by_node, bots included). Run it in a transaction. On PostgreSQL it waits for a
   * fold running in another process, or, with `skipIfBusy`, folds nothing.
   */
  async fold(tx: Executor, max: number, options: { skipIfBusy?: boolean } = {}): Promise<FoldResult> {
    const chunk = this.dialect === 'postgres' ? await this.postgresChunk(tx, max, options.skipIfBusy === true) : await this.sqliteChunk(tx, max);
    if (!chunk) return { read: 0, horizon: null };
    if (chunk.read === 0) return { read: 0, horizon: chunk.horizon };
    const inChunk = chunk.range;

    await tx
      .insertInto('scan_events_by_node')
      .columns(['node_id', 'ts', 'id'])
      .expression(tx.selectFrom('scan_events as e').select(['e.node_id', 'e.ts', 'e.id']).where(inChunk))
      .onConflict((oc) => oc.doNothing())
      .execute();
    await sql`
      INSERT INTO scan_rollups (node_id, org_id, hour, dim, value, scans)
      SELECT e.node_id, e.org_id, e.ts / ${sql.lit(HOUR_MS)}, d.dim,
        ${VALUE_OF_DIM}, count(*)
      FROM scan_events e CROSS JOIN ${DIMS} d
      WHERE ${inChunk} AND e.is_bot = 0
      GROUP BY 1, 2, 3, 4, 5
      ON CONFLICT (node_id, dim, hour, value) DO UPDATE SET scans = scan_rollups.scans + excluded.scans`.execute(tx);
    // The organization's sums and each node's days (migration 071): organization analytics read
    // these instead of every node's roll-ups.
    await sql`
      INSERT INTO scan_org_rollups (org_id, dim, hour, value, scans)
      SELECT e.org_id, d.dim, e.ts / ${sql.lit(HOUR_MS)}, ${VALUE_OF_DIM}, count(*)
      FROM scan_events e CROSS JOIN ${DIMS} d
      WHERE ${inChunk} AND e.is_bot = 0
      GROUP BY 1, 2, 3, 4
      ON CONFLICT (org_id, dim, hour, value) DO UPDATE SET scans = scan_org_rollups.scans + excluded.scans`.execute(tx);
    // The same per day (migration 087): organization analytics in whole days read 24 times fewer rows.
    await sql`
      INSERT INTO scan_org_day_rollups (org_id, dim, day, value, scans)
      SELECT e.org_id, d.dim, e.ts / ${sql.lit(DAY_MS)}, ${VALUE_OF_DIM}, count(*)
      FROM scan_events e CROSS JOIN ${DIMS} d
      WHERE ${inChunk} AND e.is_bot = 0
      GROUP BY 1, 2, 3, 4
      ON CONFLICT (org_id, dim, day, value) DO UPDATE SET scans = scan_org_day_rollups.scans + excluded.scans`.execute(tx);
    await sql`
      INSERT INTO scan_node_days (node_id, day, org_id, scans)
      SELECT e.node_id, e.ts / ${sql.lit(DAY_MS)}, e.org_id, count(*)
      FROM scan_events e
      WHERE ${inChunk} AND e.is_bot = 0
      GROUP BY 1, 2, 3
      ON CONFLICT (node_id, day) DO UPDATE SET scans = scan_node_days.scans + excluded.scans`.execute(tx);
    await tx
      .insertInto('scan_visitor_hours')
      .columns(['node_id', 'hour', 'visitor_hash', 'org_id'])
      .expression(
        tx
          .selectFrom('scan_events as e')
          .select(['e.node_id', sql<number>`e.ts / ${sql.lit(HOUR_MS)}`.as('hour'), 'e.visitor_hash', 'e.org_id'])
          .distinct()
          .where(inChunk)
          .where('e.is_bot', '=', 0),
      )
      .onConflict((oc) => oc.doNothing())
      .execute();
    // Split tests: visitors per serving rule ('' = the node's own payload), migration 065.
    await tx
      .insertInto('scan_rule_visitor_hours')
      .columns(['node_id', 'rule_key', 'hour', 'visitor_hash'])
      .expression(
        tx
          .selectFrom('scan_events as e')
          .select(['e.node_id', sql<string>`coalesce(e.rule_id, '')`.as('rule_key'), sql<number>`e.ts / ${sql.lit(HOUR_MS)}`.as('hour'), 'e.visitor_hash'])
          .distinct()
          .where(inChunk)
          .where('e.is_bot', '=', 0),
      )
      .onConflict((oc) => oc.doNothing())
      .execute();
    // Each day's count of distinct visitor keys (migration 081), before the keys are added: the
    // keys of the chunk that the day's set does not hold yet. Exact, as the fold is the only writer
    // of the sets and folds take turns (the state row's lock on PostgreSQL).
    await sql`
      INSERT INTO scan_node_days (node_id, day, org_id, scans, visitors)
      SELECT k.node_id, k.day, k.org_id, 0, count(*)
      FROM (SELECT DISTINCT e.node_id, e.ts / ${sql.lit(DAY_MS)} AS day, e.org_id, e.visitor_hash
            FROM scan_events e WHERE ${inChunk} AND e.is_bot = 0) k
      WHERE NOT EXISTS (SELECT 1 FROM scan_visitor_days v WHERE v.node_id = k.node_id AND v.day = k.day AND v.visitor_hash = k.visitor_hash)
      GROUP BY k.node_id, k.day, k.org_id
      ON CONFLICT (node_id, day) DO UPDATE SET visitors = scan_node_days.visitors + excluded.visitors`.execute(tx);
    await sql`
      INSERT INTO scan_org_days (org_id, day, visitors)
      SELECT k.org_id, k.day, count(*)
      FROM (SELECT DISTINCT e.org_id, e.ts / ${sql.lit(DAY_MS)} AS day, e.visitor_hash
            FROM scan_events e WHERE ${inChunk} AND e.is_bot = 0) k
      WHERE NOT EXISTS (SELECT 1 FROM scan_org_visitor_days v WHERE v.org_id = k.org_id AND v.day = k.day AND v.visitor_hash = k.visitor_hash)
      GROUP BY k.org_id, k.day
      ON CONFLICT (org_id, day) DO UPDATE SET visitors = scan_org_days.visitors + excluded.visitors`.execute(tx);
    await tx
      .insertInto('scan_visitor_days')
      .columns(['node_id', 'day', 'visitor_hash'])
      .expression(
        tx
          .selectFrom('scan_events as e')
          .select(['e.node_id', sql<number>`e.ts / ${sql.lit(DAY_MS)}`.as('day'), 'e.visitor_hash'])
          .distinct()
          .where(inChunk)
          .where('e.is_bot', '=', 0),
      )
      .onConflict((oc) => oc.doNothing())
      .execute();
    await tx
      .insertInto('scan_org_visitor_days')
      .columns(['org_id', 'day', 'visitor_hash'])
      .expression(
        tx
          .selectFrom('scan_events as e')
          .select(['e.org_id', sql<number>`e.ts / ${sql.lit(DAY_MS)}`.as('day'), 'e.visitor_hash'])
          .distinct()
          .where(inChunk)
          .where('e.is_bot', '=', 0),
      )
      .onConflict((oc) => oc.doNothing())
      .execute();
    await chunk.advance();
    return { read: chunk.read, horizon: chunk.horizon };
  }

  private async sqliteChunk(tx: Executor, max: number) {
    const state = await tx.selectFrom('scan_rollup_state').select('last_event').where('id', '=', 1).executeTakeFirstOrThrow();
    const after = Number(state.last_event);
    const bounds = await tx
      .selectFrom((eb) => eb.selectFrom('scan_events').select('id').where('id', '>', after).orderBy('id').limit(max).as('c'))
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.max('c.id').as('upper')])
      .executeTakeFirstOrThrow();
    const read = Number(bounds.n);
    const upper = Number(bounds.upper ?? after);
    return {
      read,
      horizon: null,
      range: sql<SqlBool>`e.id > ${after} AND e.id <= ${upper}`,
      advance: async () => {
        await tx.updateTable('scan_rollup_state').set({ last_event: upper }).where('id', '=', 1).execute();
      },
    };
  }

  private async postgresChunk(tx: Executor, max: number, skipIfBusy: boolean) {
    // The state row is the fold's lock: folds in other processes wait (or this one skips).
    const { rows: state } = await sql<{ last_xid: string; last_event: number }>`
      SELECT last_xid::text AS last_xid, last_event FROM scan_rollup_state WHERE id = 1
      FOR UPDATE ${skipIfBusy ? sql`SKIP LOCKED` : sql``}`.execute(tx);
    const at = state[0];
    if (!at) return null;
    // Every transaction older than this one is committed or gone: rows below it are final.
    const { rows: snap } = await sql<{ horizon: string }>`SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon`.execute(tx);
    const horizon = (snap[0] as { horizon: string }).horizon;
    const { rows: bounds } = await sql<{ n: number; upper_xid: string | null; upper_id: number | null }>`
      SELECT count(*) AS n, (array_agg(xid ORDER BY xid DESC, id DESC))[1]::text AS upper_xid, (array_agg(id ORDER BY xid DESC, id DESC))[1] AS upper_id
      FROM (SELECT xid, id FROM scan_events
            WHERE (xid, id) > (${at.last_xid}::xid8, ${at.last_event}) AND xid < ${horizon}::xid8
            ORDER BY xid, id LIMIT ${max}) c`.execute(tx);
    const b = bounds[0] as { n: number; upper_xid: string | null; upper_id: number | null };
    const read = Number(b.n);
    // A chunk's roll-up rows (8 per event) are grouped in memory: with the default 4 MB they were
    // sorted on disk, a third of the chunk's time. Not set for an empty chunk (the idle look).
    if (read > 0) await sql`SET LOCAL work_mem = '32MB'`.execute(tx);
    const upperXid = b.upper_xid ?? at.last_xid;
    const upperId = Number(b.upper_id ?? at.last_event);
    // The chunk (last_xid, last_event) < (xid, id) <= (upperXid, upperId), in conditions a btree
    // scan ends on. PostgreSQL 15 does not end an index scan at a row comparison's upper bound
    // while the first column is equal, so `(xid, id) <= (upperXid, upperId)` read on through every
    // later row of upperXid: after a bulk load (one transaction of a million scans) each of the
    // fold's statements read the rest of that transaction, and the fold fell to ~2,500 events/s.
    const range =
      upperXid === at.last_xid
        ? sql<SqlBool>`e.xid = ${upperXid}::xid8 AND e.id > ${at.last_event} AND e.id <= ${upperId}`
        : sql<SqlBool>`(((e.xid, e.id) > (${at.last_xid}::xid8, ${at.last_event}) AND e.xid < ${upperXid}::xid8) OR (e.xid = ${upperXid}::xid8 AND e.id <= ${upperId}))`;
    return {
      read,
      horizon: BigInt(horizon),
      range,
      advance: async () => {
        await sql`UPDATE scan_rollup_state SET last_xid = ${upperXid}::xid8, last_event = ${upperId} WHERE id = 1`.execute(tx);
      },
    };
  }

  /** PostgreSQL: the first transaction id not yet started now (every scan committed by now is below it). */
  async transactionsNow(db: Executor): Promise<bigint> {
    const { rows } = await sql<{ xmax: string }>`SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xmax`.execute(db);
    return BigInt((rows[0] as { xmax: string }).xmax);
  }

  // ---- analytics -------------------------------------------------------------------------------

  private scoped(scope: Scope) {
    return scope.kind === 'node' ? ('node_id' as const) : ('org_id' as const);
  }

  /**
   * The roll-up rows to sum for dimensions `dims` in [fromHour, toHour): a node's hourly roll-ups, or
   * its organization's sums of them (migration 071), per day where the range is whole days and
   * hours are not asked for (migration 087: 24 times fewer rows). Each row's `hour` is the first
   * hour it covers.
   */
  private rollupRows(db: Executor, scope: Scope, dims: readonly string[], fromHour: number, toHour: number, byHour: boolean): AliasedSelectQueryBuilder<RollupRow, 'r'> {
    if (scope.kind === 'node') {
      return db.selectFrom('scan_rollups').select(['dim', 'hour', 'value', 'scans']).where('node_id', '=', scope.id).where('dim', 'in', dims).where('hour', '>=', fromHour).where('hour', '<', toHour).as('r');
    }
    if (!byHour && fromHour % 24 === 0 && toHour % 24 === 0) {
      return db
        .selectFrom('scan_org_day_rollups')
        .select(['dim', sql<number>`day * 24`.as('hour'), 'value', 'scans'])
        .where('org_id', '=', scope.id)
        .where('dim', 'in', dims)
        .where('day', '>=', fromHour / 24)
        .where('day', '<', toHour / 24)
        .as('r');
    }
    return db.selectFrom('scan_org_rollups').select(['dim', 'hour', 'value', 'scans']).where('org_id', '=', scope.id).where('dim', 'in', dims).where('hour', '>=', fromHour).where('hour', '<', toHour).as('r');
  }

  async totalScans(db: Executor, scope: Scope, fromHour: number, toHour: number): Promise<number> {
    const row = await db
      .selectFrom(this.rollupRows(db, scope, [''], fromHour, toHour, false))
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('r.scans'), eb.lit(0)).as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Distinct visitor keys in whole hours (hour resolution). Keys are per day, so the days the
   * range covers whole are the per-day counts' sum (migration 081) and only the hours of the days
   * at its edges count keys.
   */
  async uniqueVisitorsHourly(db: Executor, scope: Scope, fromHour: number, toHour: number): Promise<number> {
    const firstDay = Math.ceil(fromHour / 24);
    const endDay = Math.floor(toHour / 24);
    if (firstDay >= endDay) return this.distinctVisitorsInHours(db, scope, fromHour, toHour);
    const before = await this.distinctVisitorsInHours(db, scope, fromHour, firstDay * 24);
    const days = await this.uniqueVisitorsDaily(db, scope, firstDay, endDay);
    return before + days + (await this.distinctVisitorsInHours(db, scope, endDay * 24, toHour));
  }

  private async distinctVisitorsInHours(db: Executor, scope: Scope, fromHour: number, toHour: number): Promise<number> {
    if (fromHour >= toHour) return 0;
    const row = await db
      .selectFrom('scan_visitor_hours')
      .select((eb) => eb.fn.count<number>('visitor_hash').distinct().as('n'))
      .where(this.scoped(scope), '=', scope.id)
      .where('hour', '>=', fromHour)
      .where('hour', '<', toHour)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Distinct daily visitor keys in whole days: keys are per day, so the sum of each day's count
   * kept by the fold (migration 081), one row per day whatever the number of scans.
   */
  async uniqueVisitorsDaily(db: Executor, scope: Scope, fromDay: number, toDay: number): Promise<number> {
    const row = await this.visitorDaysOf(db, scope)
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('d.visitors'), eb.lit(0)).as('n'))
      .where('d.day', '>=', fromDay)
      .where('d.day', '<', toDay)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** A node's per-day visitor counts, or its organization's (migration 081). */
  private visitorDaysOf(db: Executor, scope: Scope) {
    return scope.kind === 'node'
      ? db.selectFrom('scan_node_days as d').where('d.node_id', '=', scope.id)
      : db.selectFrom('scan_org_days as d').where('d.org_id', '=', scope.id);
  }

  /**
   * Scans per bucket; `bucketSql` maps `hour` to a bucket number (integer division on both
   * dialects); `byHour` when buckets are hours.
   */
  async seriesScans(db: Executor, scope: Scope, fromHour: number, toHour: number, bucketSql: string, byHour: boolean): Promise<Array<{ bucket: number; scans: number }>> {
    const rows = await db
      .selectFrom(this.rollupRows(db, scope, [''], fromHour, toHour, byHour))
      .select((eb) => [sql<number>`${sql.raw(bucketSql)}`.as('bucket'), eb.fn.sum<number>('r.scans').as('scans')])
      .groupBy(sql.raw(bucketSql))
      .execute();
    return rows.map((r) => ({ bucket: Number(r.bucket), scans: Number(r.scans) }));
  }

  /** Visitors per hour (hour buckets). */
  async seriesVisitorsHourly(db: Executor, scope: Scope, fromHour: number, toHour: number): Promise<Array<{ bucket: number; visitors: number }>> {
    const rows = await db
      .selectFrom('scan_visitor_hours')
      .select((eb) => ['hour', eb.fn.count<number>('visitor_hash').distinct().as('visitors')])
      .where(this.scoped(scope), '=', scope.id)
      .where('hour', '>=', fromHour)
      .where('hour', '<', toHour)
      .groupBy('hour')
      .execute();
    return rows.map((r) => ({ bucket: Number(r.hour), visitors: Number(r.visitors) }));
  }

  /** Visitors per day or week bucket (sums of the per-day counts); `bucketSql` maps `day` to a bucket number. */
  async seriesVisitorsDaily(db: Executor, scope: Scope, fromDay: number, toDay: number, bucketSql: string): Promise<Array<{ bucket: number; visitors: number }>> {
    const rows = await db
      .selectFrom(this.visitorDaysOf(db, scope).select(['d.day', 'd.visitors']).where('d.day', '>=', fromDay).where('d.day', '<', toDay).as('v'))
      .select((eb) => [sql<number>`${sql.raw(bucketSql)}`.as('bucket'), eb.fn.sum<number>('v.visitors').as('visitors')])
      .groupBy(sql.raw(bucketSql))
      .execute();
    return rows.map((r) => ({ bucket: Number(r.bucket), visitors: Number(r.visitors) }));
  }

  /** Scans and distinct visitor keys of a node per serving rule ('' = its own payload), in whole hours. */
  async byRule(db: Executor, nodeId: string, fromHour: number, toHour: number): Promise<Array<{ rule_key: string; scans: number; visitors: number }>> {
    const scans = await this.breakdown(db, { kind: 'node', id: nodeId }, fromHour, toHour, 'rule');
    const rows = await db
      .selectFrom('scan_rule_visitor_hours')
      .select((eb) => ['rule_key', eb.fn.count<number>('visitor_hash').distinct().as('visitors')])
      .where('node_id', '=', nodeId)
      .where('hour', '>=', fromHour)
      .where('hour', '<', toHour)
      .groupBy('rule_key')
      .execute();
    const visitors = new Map(rows.map((r) => [r.rule_key, Number(r.visitors)]));
    return scans.map((s) => ({ rule_key: s.value, scans: s.scans, visitors: visitors.get(s.value) ?? 0 }));
  }

  async breakdown(db: Executor, scope: Scope, fromHour: number, toHour: number, dim: Dimension): Promise<Array<{ value: string; scans: number }>> {
    return (await this.breakdowns(db, scope, fromHour, toHour, [dim])).get(dim) ?? [];
  }

  /** Scans per value of each dimension, most first (ties in byte order): one query for all of them. */
  async breakdowns(db: Executor, scope: Scope, fromHour: number, toHour: number, dims: readonly Dimension[]): Promise<Map<Dimension, Array<{ value: string; scans: number }>>> {
    const rows = await db
      .selectFrom(this.rollupRows(db, scope, dims, fromHour, toHour, false))
      .select((eb) => ['r.dim', 'r.value', eb.fn.sum<number>('r.scans').as('total')])
      .groupBy(['r.dim', 'r.value'])
      // An organization's sums keep a row at 0 after a node's delete (migrations 071, 087).
      .having((eb) => eb.fn.sum('r.scans'), '>', 0)
      .orderBy('r.dim')
      .orderBy('total', 'desc')
      .orderBy(this.byteOrder('r.value'))
      .execute();
    const out = new Map<Dimension, Array<{ value: string; scans: number }>>(dims.map((d) => [d, []]));
    for (const r of rows) out.get(r.dim as Dimension)?.push({ value: r.value, scans: Number(r.total) });
    return out;
  }

  async topNodes(db: Executor, orgId: string, fromHour: number, toHour: number, limit: number): Promise<Array<{ id: string; slug: string; label: string; scans: number }>> {
    const rows = await db
      .selectFrom((eb) =>
        eb
          .selectFrom(this.nodeScans(db, orgId, fromHour, toHour).as('u'))
          .select((inner) => ['u.node_id', inner.fn.sum<number>('u.scans').as('total')])
          .groupBy('u.node_id')
          .orderBy('total', 'desc')
          .limit(limit)
          .as('t'),
      )
      .innerJoin('nodes as n', 'n.id', 't.node_id')
      .select(['n.id', 'n.slug', 'n.label', 't.total'])
      .orderBy('t.total', 'desc')
      .orderBy(this.byteOrder('n.slug'))
      .execute();
    return rows.map((r) => ({ id: r.id, slug: r.slug, label: r.label, scans: Number(r.total) }));
  }

  async nodesScanned(db: Executor, orgId: string, fromHour: number, toHour: number): Promise<number> {
    const row = await db
      .selectFrom(this.nodeScans(db, orgId, fromHour, toHour).as('u'))
      .select((eb) => eb.fn.count<number>('u.node_id').distinct().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Each scanned node's human scans in [fromHour, toHour), as rows to sum: whole days from
   * scan_node_days (migration 071), the hours at the edges of the range from scan_rollups.
   */
  private nodeScans(db: Executor, orgId: string, fromHour: number, toHour: number) {
    const hours = (from: number, to: number) =>
      // dim = '' as a literal, so the query's own terms imply the partial index's WHERE
      // (scan_rollups_org_totals, migration 090): SQLite weighs a bound value only in builds with STAT4.
      db.selectFrom('scan_rollups').select(['node_id', 'scans']).where('org_id', '=', orgId).where('dim', '=', sql.lit('')).where('hour', '>=', from).where('hour', '<', to);
    const firstDay = Math.ceil(fromHour / 24);
    const endDay = Math.floor(toHour / 24);
    if (firstDay >= endDay) return hours(fromHour, toHour);
    return db
      .selectFrom('scan_node_days')
      .select(['node_id', 'scans'])
      .where('org_id', '=', orgId)
      .where('day', '>=', firstDay)
      .where('day', '<', endDay)
      .unionAll(hours(fromHour, firstDay * 24))
      .unionAll(hours(endDay * 24, toHour));
  }

  /** Ties broken in byte order on both dialects (SQLite's; PostgreSQL's default collation differs). */
  private byteOrder(column: string) {
    return this.dialect === 'postgres' ? sql`${sql.ref(column)} COLLATE "C"` : sql`${sql.ref(column)}`;
  }

  // ---- the scan list (the caller folds first: scan_events_by_node holds folded scans only) -------

  private byNode(db: Executor, nodeId: string, bots: BotFilter) {
    let query = db.selectFrom('scan_events_by_node as i').innerJoin('scan_events as e', 'e.id', 'i.id').where('i.node_id', '=', nodeId);
    if (bots === 'exclude') query = query.where('e.is_bot', '=', 0);
    if (bots === 'only') query = query.where('e.is_bot', '=', 1);
    return query;
  }

  async countScans(db: Executor, nodeId: string, fromMs: number, toMs: number, bots: BotFilter): Promise<number> {
    const row = await this.byNode(db, nodeId, bots)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('i.ts', '>=', fromMs)
      .where('i.ts', '<', toMs)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Newest first (time, then id). */
  async listScans(db: Executor, nodeId: string, fromMs: number, toMs: number, bots: BotFilter, limit: number, offset: number): Promise<ScanEventRow[]> {
    const rows = await this.byNode(db, nodeId, bots)
      .select(EVENT_COLUMNS)
      .where('i.ts', '>=', fromMs)
      .where('i.ts', '<', toMs)
      .orderBy('i.ts', 'desc')
      .orderBy('i.id', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
    return rows.map(toRow);
  }

  /**
   * Up to `limit` scans older than `before` (by time, then id), newest first: a keyset page, as
   * cheap deep into millions of scans as at the start (the primary key is (node_id, ts, id)).
   */
  async scansBefore(db: Executor, nodeId: string, fromMs: number, toMs: number, bots: BotFilter, before: { ts: number; id: number }, limit: number): Promise<ScanEventRow[]> {
    // One upper bound on ts (SQLite uses one per index range); ties on ts are told apart by id.
    const upper = Math.min(toMs - 1, before.ts);
    const rows = await this.byNode(db, nodeId, bots)
      .select(EVENT_COLUMNS)
      .where('i.ts', '>=', fromMs)
      .where('i.ts', '<=', upper)
      .where((eb) => eb.or([eb('i.ts', '<', before.ts), eb('i.id', '<', before.id)]))
      .orderBy('i.ts', 'desc')
      .orderBy('i.id', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toRow);
  }
}

function toRow(r: Omit<ScanEventRow, 'id' | 'ts' | 'is_bot'> & { id: number | string; ts: number | string; is_bot: number | string }): ScanEventRow {
  return { ...r, id: Number(r.id), ts: Number(r.ts), is_bot: Number(r.is_bot) };
}

