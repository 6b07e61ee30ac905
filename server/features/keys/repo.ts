import type { Database } from 'better-sqlite3';
import type { Plan } from '../../schemas/common.ts';

export interface OrgRow {
  id: string;
  name: string;
  created_at: string;
}

export interface ApiKeyRow {
  id: string;
  org_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  plan: Plan;
  limits_json: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export class KeysRepo {
  private readonly insertOrgStmt;
  private readonly getOrgStmt;
  private readonly countOrgsStmt;
  private readonly insertKeyStmt;
  private readonly byHashStmt;
  private readonly getKeyStmt;
  private readonly listKeysStmt;
  private readonly revokeStmt;
  private readonly touchStmt;

  private readonly db: Database;

  constructor(db: Database) {
    this.db = db;
    this.insertOrgStmt = db.prepare('INSERT INTO organizations (id, name, created_at) VALUES (@id, @name, @created_at)');
    this.getOrgStmt = db.prepare('SELECT id, name, created_at FROM organizations WHERE id = ?');
    this.countOrgsStmt = db.prepare('SELECT COUNT(*) FROM organizations').pluck();
    this.insertKeyStmt = db.prepare(
      `INSERT INTO api_keys (id, org_id, name, prefix, key_hash, plan, limits_json, created_at, last_used_at, revoked_at)
       VALUES (@id, @org_id, @name, @prefix, @key_hash, @plan, @limits_json, @created_at, @last_used_at, @revoked_at)`,
    );
    this.byHashStmt = db.prepare('SELECT * FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL');
    this.getKeyStmt = db.prepare('SELECT * FROM api_keys WHERE org_id = ? AND id = ? AND revoked_at IS NULL');
    this.listKeysStmt = db.prepare(
      'SELECT * FROM api_keys WHERE org_id = ? AND revoked_at IS NULL ORDER BY created_at DESC, rowid DESC',
    );
    this.revokeStmt = db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ?');
    this.touchStmt = db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?');
  }

  insertOrg(org: OrgRow): void {
    this.insertOrgStmt.run(org);
  }

  getOrg(id: string): OrgRow | undefined {
    return this.getOrgStmt.get(id) as OrgRow | undefined;
  }

  /** The oldest organization (the default one a fresh instance creates). */
  firstOrg(): OrgRow | undefined {
    return this.db.prepare('SELECT id, name, created_at FROM organizations ORDER BY created_at ASC, rowid ASC LIMIT 1').get() as
      | OrgRow
      | undefined;
  }

  countOrgs(): number {
    return this.countOrgsStmt.get() as number;
  }

  insertKey(key: ApiKeyRow): void {
    this.insertKeyStmt.run(key);
  }

  activeByHash(hash: string): ApiKeyRow | undefined {
    return this.byHashStmt.get(hash) as ApiKeyRow | undefined;
  }

  get(orgId: string, id: string): ApiKeyRow | undefined {
    return this.getKeyStmt.get(orgId, id) as ApiKeyRow | undefined;
  }

  list(orgId: string): ApiKeyRow[] {
    return this.listKeysStmt.all(orgId) as ApiKeyRow[];
  }

  revoke(id: string, at: string): void {
    this.revokeStmt.run(at, id);
  }

  touch(id: string, at: string): void {
    this.touchStmt.run(at, id);
  }
}
