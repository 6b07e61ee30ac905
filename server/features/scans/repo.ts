/**
 * SQL for scans: resolving slugs for the scan path, the daily salt, the cache epoch, roll-ups
 * and analytics queries (recording is writer.ts). Prepared statements only.
 */
import type { Database, Statement } from 'better-sqlite3';

export interface NodeRowForScan {
  id: string;
  org_id: string;
  slug: string;
  function_type: string;
  payload_json: string;
  status: string;
}

export interface RuleRowForScan {
  id: string;
  rule_type: string;
  conditions_json: string;
  function_type: string;
  payload_json: string;
  priority: number;
  enabled: number;
  created_at: string;
}

export interface ScanEventInsert {
  node_id: string;
  org_id: string;
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
}

export interface ScanEventRow extends ScanEventInsert {
  id: number;
}

export class ScanRepo {
  readonly db: Database;
  private readonly epochStmt: Statement;
  private readonly nodeStmt: Statement;
  private readonly slugStmt: Statement;
  private readonly rulesStmt: Statement;
  private readonly saltGet: Statement;
  private readonly saltPut: Statement;

  constructor(db: Database) {
    this.db = db;
    this.epochStmt = db.prepare('SELECT epoch FROM scan_cache_epoch WHERE id = 1').pluck();
    this.nodeStmt = db.prepare('SELECT id, org_id, slug, function_type, payload_json, status FROM nodes WHERE slug = ?');
    this.slugStmt = db.prepare('SELECT deleted_at FROM slugs WHERE slug = ?');
    this.rulesStmt = db.prepare(
      'SELECT id, rule_type, conditions_json, function_type, payload_json, priority, enabled, created_at FROM rules WHERE node_id = ? ORDER BY priority, created_at, id',
    );
    this.saltGet = db.prepare('SELECT day, salt FROM scan_salt WHERE id = 1');
    this.saltPut = db.prepare('INSERT INTO scan_salt (id, day, salt) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET day = excluded.day, salt = excluded.salt');
  }

  cacheEpoch(): number {
    return this.epochStmt.get() as number;
  }

  nodeBySlug(slug: string): NodeRowForScan | undefined {
    return this.nodeStmt.get(slug) as NodeRowForScan | undefined;
  }

  /** undefined = never minted; otherwise the tombstone time (null while the node exists). */
  slugDeletedAt(slug: string): string | null | undefined {
    const row = this.slugStmt.get(slug) as { deleted_at: string | null } | undefined;
    return row ? row.deleted_at : undefined;
  }

  rulesOf(nodeId: string): RuleRowForScan[] {
    return this.rulesStmt.all(nodeId) as RuleRowForScan[];
  }

  /** The stored salt for `day`, creating (and so replacing yesterday's) if needed. */
  saltFor(day: string, fresh: () => string): string {
    return this.db.transaction(() => {
      const row = this.saltGet.get() as { day: string; salt: string } | undefined;
      if (row && row.day === day) return row.salt;
      // Never go back to an older day's salt (a clock step backwards keeps today's).
      if (row && row.day > day) return row.salt;
      const salt = fresh();
      this.saltPut.run(day, salt);
      return salt;
    }).immediate();
  }
}

// ---- roll-ups and analytics -----------------------------------------------------------------

export const DIMENSIONS = ['device_type', 'os', 'browser', 'country', 'source', 'rule', 'outcome'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

type RollupEventRow = ScanEventInsert & { id: number };

export interface Scope {
  kind: 'node' | 'org';
  id: string;
}

export class AnalyticsRepo {
  private readonly db: Database;
  private readonly watermark: Statement;
  private readonly setWatermark: Statement;
  private readonly eventsAfter: Statement;
  private readonly upsertRollup: Statement;
  private readonly addVisitor: Statement;
  private readonly addVisitorDay: Statement;
  private readonly addOrgVisitorDay: Statement;
  private readonly addByNode: Statement;
  private readonly backlogStmt: Statement;
  private readonly rollUpTx: (max: number) => number;

  constructor(db: Database) {
    this.db = db;
    this.watermark = db.prepare('SELECT last_event FROM scan_rollup_state WHERE id = 1').pluck();
    this.setWatermark = db.prepare('UPDATE scan_rollup_state SET last_event = ? WHERE id = 1');
    this.eventsAfter = db.prepare(
      'SELECT id, node_id, org_id, ts, device_type, os, browser, country, source, rule_id, outcome, is_bot, visitor_hash FROM scan_events WHERE id > ? ORDER BY id LIMIT ?',
    );
    this.upsertRollup = db.prepare(
      `INSERT INTO scan_rollups (node_id, org_id, hour, dim, value, scans) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (node_id, dim, hour, value) DO UPDATE SET scans = scans + excluded.scans`,
    );
    this.addVisitor = db.prepare('INSERT OR IGNORE INTO scan_visitor_hours (node_id, hour, visitor_hash, org_id) VALUES (?, ?, ?, ?)');
    this.addVisitorDay = db.prepare('INSERT OR IGNORE INTO scan_visitor_days (node_id, day, visitor_hash) VALUES (?, ?, ?)');
    this.addOrgVisitorDay = db.prepare('INSERT OR IGNORE INTO scan_org_visitor_days (org_id, day, visitor_hash) VALUES (?, ?, ?)');
    this.backlogStmt = db.prepare('SELECT COALESCE(MAX(id), 0) - (SELECT last_event FROM scan_rollup_state WHERE id = 1) FROM scan_events').pluck();
    this.addByNode = db.prepare('INSERT OR IGNORE INTO scan_events_by_node (node_id, ts, id) VALUES (?, ?, ?)');
    this.rollUpTx = db.transaction((max: number) => this.rollUpChunk(max)).immediate as unknown as (max: number) => number;
  }

  /** Scan events not folded yet. */
  backlog(): number {
    return this.backlogStmt.get() as number;
  }

  /**
   * Folds up to `max` new scan events into the roll-ups and the per-node order
   * (scan_events_by_node, bots included); returns how many were read.
   */
  rollUp(max: number): number {
    return this.rollUpTx(max);
  }

  private rollUpChunk(max: number): number {
    const after = this.watermark.get() as number;
    const rows = this.eventsAfter.all(after, max) as RollupEventRow[];
    if (rows.length === 0) return 0;
    const counts = new Map<string, { node: string; org: string; hour: number; dim: string; value: string; n: number }>();
    const bump = (node: string, org: string, hour: number, dim: string, value: string) => {
      const key = `${node}\u0000${hour}\u0000${dim}\u0000${value}`;
      const c = counts.get(key);
      if (c) c.n++;
      else counts.set(key, { node, org, hour, dim, value, n: 1 });
    };
    for (const e of rows) {
      this.addByNode.run(e.node_id, e.ts, e.id);
      if (e.is_bot) continue;
      const hour = Math.floor(e.ts / 3_600_000);
      bump(e.node_id, e.org_id, hour, '', '');
      bump(e.node_id, e.org_id, hour, 'device_type', e.device_type);
      bump(e.node_id, e.org_id, hour, 'os', e.os);
      bump(e.node_id, e.org_id, hour, 'browser', e.browser ?? '');
      bump(e.node_id, e.org_id, hour, 'country', e.country ?? '');
      bump(e.node_id, e.org_id, hour, 'source', e.source);
      bump(e.node_id, e.org_id, hour, 'rule', e.rule_id ?? '');
      bump(e.node_id, e.org_id, hour, 'outcome', e.outcome);
      this.addVisitor.run(e.node_id, hour, e.visitor_hash, e.org_id);
      const day = Math.floor(hour / 24);
      this.addVisitorDay.run(e.node_id, day, e.visitor_hash);
      this.addOrgVisitorDay.run(e.org_id, day, e.visitor_hash);
    }
    for (const c of counts.values()) this.upsertRollup.run(c.node, c.org, c.hour, c.dim, c.value, c.n);
    this.setWatermark.run((rows[rows.length - 1] as RollupEventRow).id);
    return rows.length;
  }

  private where(scope: Scope): string {
    return scope.kind === 'node' ? 'node_id = ?' : 'org_id = ?';
  }

  totalScans(scope: Scope, fromHour: number, toHour: number): number {
    return this.db
      .prepare(`SELECT coalesce(sum(scans), 0) FROM scan_rollups WHERE ${this.where(scope)} AND dim = '' AND hour >= ? AND hour < ?`)
      .pluck()
      .get(scope.id, fromHour, toHour) as number;
  }

  /** Distinct visitor keys in whole hours (hour resolution). */
  uniqueVisitorsHourly(scope: Scope, fromHour: number, toHour: number): number {
    return this.db
      .prepare(`SELECT count(DISTINCT visitor_hash) FROM scan_visitor_hours WHERE ${this.where(scope)} AND hour >= ? AND hour < ?`)
      .pluck()
      .get(scope.id, fromHour, toHour) as number;
  }

  /** (day, key) pairs in whole days: keys are per day, so this is a plain count. */
  uniqueVisitorsDaily(scope: Scope, fromDay: number, toDay: number): number {
    const table = scope.kind === 'node' ? 'scan_visitor_days' : 'scan_org_visitor_days';
    return this.db
      .prepare(`SELECT count(*) FROM ${table} WHERE ${this.where(scope)} AND day >= ? AND day < ?`)
      .pluck()
      .get(scope.id, fromDay, toDay) as number;
  }

  /** Scans per bucket; `bucketSql` maps `hour` to a bucket number. */
  seriesScans(scope: Scope, fromHour: number, toHour: number, bucketSql: string): Array<{ bucket: number; scans: number }> {
    return this.db
      .prepare(
        `SELECT ${bucketSql} AS bucket, sum(scans) AS scans FROM scan_rollups
         WHERE ${this.where(scope)} AND dim = '' AND hour >= ? AND hour < ? GROUP BY bucket`,
      )
      .all(scope.id, fromHour, toHour) as Array<{ bucket: number; scans: number }>;
  }

  /** Visitors per hour (hour buckets). */
  seriesVisitorsHourly(scope: Scope, fromHour: number, toHour: number): Array<{ bucket: number; visitors: number }> {
    return this.db
      .prepare(
        `SELECT hour AS bucket, count(DISTINCT visitor_hash) AS visitors FROM scan_visitor_hours
         WHERE ${this.where(scope)} AND hour >= ? AND hour < ? GROUP BY hour`,
      )
      .all(scope.id, fromHour, toHour) as Array<{ bucket: number; visitors: number }>;
  }

  /** Visitors per day or week bucket; `bucketSql` maps `day` to a bucket number. */
  seriesVisitorsDaily(scope: Scope, fromDay: number, toDay: number, bucketSql: string): Array<{ bucket: number; visitors: number }> {
    const table = scope.kind === 'node' ? 'scan_visitor_days' : 'scan_org_visitor_days';
    return this.db
      .prepare(
        `SELECT ${bucketSql} AS bucket, count(*) AS visitors FROM ${table}
         WHERE ${this.where(scope)} AND day >= ? AND day < ? GROUP BY bucket`,
      )
      .all(scope.id, fromDay, toDay) as Array<{ bucket: number; visitors: number }>;
  }

  breakdown(scope: Scope, fromHour: number, toHour: number, dim: Dimension): Array<{ value: string; scans: number }> {
    return this.db
      .prepare(
        `SELECT value, sum(scans) AS scans FROM scan_rollups
         WHERE ${this.where(scope)} AND dim = ? AND hour >= ? AND hour < ? GROUP BY value ORDER BY scans DESC, value`,
      )
      .all(scope.id, dim, fromHour, toHour) as Array<{ value: string; scans: number }>;
  }

  topNodes(orgId: string, fromHour: number, toHour: number, limit: number): Array<{ id: string; slug: string; label: string; scans: number }> {
    return this.db
      .prepare(
        `SELECT n.id, n.slug, n.label, t.scans FROM (
           SELECT node_id, sum(scans) AS scans FROM scan_rollups
           WHERE org_id = ? AND dim = '' AND hour >= ? AND hour < ? GROUP BY node_id ORDER BY scans DESC LIMIT ?
         ) t JOIN nodes n ON n.id = t.node_id ORDER BY t.scans DESC, n.slug`,
      )
      .all(orgId, fromHour, toHour, limit) as Array<{ id: string; slug: string; label: string; scans: number }>;
  }

  nodesScanned(orgId: string, fromHour: number, toHour: number): number {
    return this.db
      .prepare(`SELECT count(DISTINCT node_id) FROM scan_rollups WHERE org_id = ? AND dim = '' AND hour >= ? AND hour < ?`)
      .pluck()
      .get(orgId, fromHour, toHour) as number;
  }

  private scanFilter(bots: 'exclude' | 'include' | 'only'): string {
    return bots === 'include' ? '' : bots === 'only' ? ' AND e.is_bot = 1' : ' AND e.is_bot = 0';
  }

  // The caller folds first (scan_events_by_node holds the folded scans only).
  private static readonly BY_NODE = `FROM scan_events_by_node i JOIN scan_events e ON e.id = i.id WHERE i.node_id = ? AND i.ts >= ? AND i.ts < ?`;
  private static readonly COLUMNS = 'e.id, e.node_id, e.org_id, e.ts, e.device_type, e.os, e.browser, e.country, e.source, e.rule_id, e.outcome, e.is_bot, e.visitor_hash';

  countScans(nodeId: string, fromMs: number, toMs: number, bots: 'exclude' | 'include' | 'only'): number {
    return this.db
      .prepare(`SELECT count(*) ${AnalyticsRepo.BY_NODE}${this.scanFilter(bots)}`)
      .pluck()
      .get(nodeId, fromMs, toMs) as number;
  }

  /** Newest first (time, then id). */
  listScans(nodeId: string, fromMs: number, toMs: number, bots: 'exclude' | 'include' | 'only', limit: number, offset: number): ScanEventRow[] {
    return this.db
      .prepare(`SELECT ${AnalyticsRepo.COLUMNS} ${AnalyticsRepo.BY_NODE}${this.scanFilter(bots)} ORDER BY i.ts DESC, i.id DESC LIMIT ? OFFSET ?`)
      .all(nodeId, fromMs, toMs, limit, offset) as ScanEventRow[];
  }

  /**
   * Up to `limit` scans older than `before` (by time, then id), newest first: a keyset page, as
   * cheap deep into millions of scans as at the start (the primary key is (node_id, ts, id)).
   */
  scansBefore(
    nodeId: string,
    fromMs: number,
    toMs: number,
    bots: 'exclude' | 'include' | 'only',
    before: { ts: number; id: number },
    limit: number,
  ): ScanEventRow[] {
    // One upper bound on ts (SQLite uses one per index range); ties on ts are told apart by id.
    const upper = Math.min(toMs - 1, before.ts);
    return this.db
      .prepare(
        `SELECT ${AnalyticsRepo.COLUMNS} FROM scan_events_by_node i JOIN scan_events e ON e.id = i.id
         WHERE i.node_id = ? AND i.ts >= ? AND i.ts <= ? AND (i.ts < ? OR i.id < ?)${this.scanFilter(bots)}
         ORDER BY i.ts DESC, i.id DESC LIMIT ?`,
      )
      .all(nodeId, fromMs, upper, before.ts, before.id, limit) as ScanEventRow[];
  }
}
