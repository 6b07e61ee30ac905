/**
 * The SQLite scan path's reads: resolving slugs, the daily salt, the cache epoch (recording is
 * writer.ts). Hand-written prepared statements on the scan path's own connection, synchronous:
 * the measured hot path (docs/scans.md). PostgreSQL's are postgresRepo.ts; roll-ups and
 * analytics, on both, analyticsRepo.ts.
 */
import type { Database, Statement } from 'better-sqlite3';

export interface NodeRowForScan {
  id: string;
  org_id: string;
  slug: string;
  function_type: string;
  payload_json: string;
  status: string;
  /** Node limits (docs/scans.md "Node limits"); scan_count as of the read. */
  scan_count: number;
  expires_at: string | null;
  max_scans: number | null;
  password_hash: string | null;
  after_limit_json: string | null;
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
  private readonly scanCountStmt: Statement;
  private readonly rulesStmt: Statement;
  private readonly saltGet: Statement;
  private readonly saltPut: Statement;

  constructor(db: Database) {
    this.db = db;
    this.epochStmt = db.prepare('SELECT epoch FROM scan_cache_epoch WHERE id = 1').pluck();
    this.nodeStmt = db.prepare('SELECT id, org_id, slug, function_type, payload_json, status, scan_count, expires_at, max_scans, password_hash, after_limit_json FROM nodes WHERE slug = ?');
    this.slugStmt = db.prepare('SELECT deleted_at FROM slugs WHERE slug = ?');
    this.scanCountStmt = db.prepare('SELECT scan_count FROM nodes WHERE id = ?').pluck();
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

  /** The node's scan_count as stored (undefined: no such node). */
  scanCountOf(nodeId: string): number | undefined {
    return this.scanCountStmt.get(nodeId) as number | undefined;
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
