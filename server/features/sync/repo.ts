import type { Database } from 'better-sqlite3';
import { BLOCK_SIZE } from '../slugs/allocator.ts';

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

/** All SQL of the sync feature: remote-side registry, site-side lease state, settings. */
export class SyncRepo {
  private readonly db: Database;
  private readonly stmts;

  constructor(db: Database) {
    this.db = db;
    this.stmts = {
      getSetting: db.prepare('SELECT value FROM settings WHERE key = ?').pluck(),
      setSetting: db.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),
      deleteSetting: db.prepare('DELETE FROM settings WHERE key = ?'),
      // remote side
      getSite: db.prepare('SELECT * FROM sync_sites WHERE site_id = ?'),
      insertSite: db.prepare('INSERT INTO sync_sites (site_id, org_id, name, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?)'),
      touchSite: db.prepare('UPDATE sync_sites SET name = ?, last_seen_at = ? WHERE site_id = ?'),
      listSites: db.prepare('SELECT * FROM sync_sites WHERE org_id = ? ORDER BY created_at DESC, site_id'),
      getIncarnation: db.prepare('SELECT * FROM sync_incarnations WHERE site_id = ? AND incarnation = ?'),
      insertIncarnation: db.prepare(
        'INSERT INTO sync_incarnations (site_id, incarnation, token, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?)',
      ),
      advanceToken: db.prepare('UPDATE sync_incarnations SET token = ?, last_seen_at = ? WHERE site_id = ? AND incarnation = ?'),
      listIncarnations: db.prepare(
        `SELECT i.incarnation, i.created_at, i.last_seen_at,
                (SELECT COUNT(*) FROM sync_leases l WHERE l.site_id = i.site_id AND l.incarnation = i.incarnation) AS blocks
           FROM sync_incarnations i WHERE i.site_id = ? ORDER BY i.created_at, i.incarnation`,
      ),
      leaseOf: db.prepare('SELECT * FROM sync_leases WHERE block = ?'),
      insertLease: db.prepare(
        'INSERT INTO sync_leases (block, org_id, site_id, incarnation, kind, grant_token, leased_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      leasesByGrant: db.prepare(
        "SELECT block FROM sync_leases WHERE site_id = ? AND incarnation = ? AND grant_token = ? AND kind = 'lease' ORDER BY block",
      ).pluck(),
      leasesOfIncarnation: db.prepare('SELECT block FROM sync_leases WHERE site_id = ? AND incarnation = ? ORDER BY block').pluck(),
      ownBlock: db.prepare('SELECT 1 FROM slug_blocks WHERE block = ?').pluck(),
      orgIds: db.prepare('SELECT id FROM organizations ORDER BY created_at, id LIMIT 2').pluck(),
      orgName: db.prepare('SELECT name FROM organizations WHERE id = ?').pluck(),
      // site side
      blocks: db.prepare('SELECT block, next_offset, source FROM slug_blocks ORDER BY acquired_at, block'),
      claimable: db.prepare(
        `SELECT block FROM slug_blocks
          WHERE (source = 'local' AND block NOT IN (SELECT block FROM sync_site_blocks WHERE state = 'dropped'))
             OR block IN (SELECT block FROM sync_site_blocks WHERE state = 'retired')
          ORDER BY block`,
      ).pluck(),
      blockState: db.prepare('SELECT state, used FROM sync_site_blocks WHERE block = ?'),
      activeLeased: db.prepare(
        `SELECT COUNT(*) AS blocks, COALESCE(SUM(${BLOCK_SIZE} - next_offset), 0) AS slugs
           FROM slug_blocks WHERE source = 'lease' AND next_offset < ${BLOCK_SIZE}`,
      ),
      nextOffset: db.prepare('SELECT next_offset FROM slug_blocks WHERE block = ?').pluck(),
      exhaust: db.prepare(`UPDATE slug_blocks SET next_offset = ${BLOCK_SIZE} WHERE block = ?`),
      toLease: db.prepare("UPDATE slug_blocks SET source = 'lease' WHERE block = ?"),
      adopt: db.prepare("INSERT OR IGNORE INTO slug_blocks (block, next_offset, source, acquired_at) VALUES (?, 0, 'lease', ?)"),
      setBlockState: db.prepare(
        `INSERT INTO sync_site_blocks (block, incarnation, state, used, reason, updated_at) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (block) DO UPDATE SET incarnation = excluded.incarnation, state = excluded.state,
             used = excluded.used, reason = excluded.reason, updated_at = excluded.updated_at`,
      ),
      openBlocks: db.prepare(`SELECT block, next_offset FROM slug_blocks WHERE next_offset < ${BLOCK_SIZE}`),
      insertConflict: db.prepare('INSERT INTO sync_conflicts (kind, detail_json, detected_at) VALUES (?, ?, ?)'),
      conflicts: db.prepare('SELECT * FROM sync_conflicts ORDER BY id'),
      resolveConflict: db.prepare('UPDATE sync_conflicts SET resolved_at = COALESCE(resolved_at, ?) WHERE id = ?'),
      pendingBatchDemand: db.prepare(
        "SELECT COALESCE(SUM(quantity - nodes_generated), 0) FROM batches WHERE status IN ('pending', 'generating')",
      ).pluck(),
    };
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  // ---- settings ----
  getSetting(key: string): string | undefined {
    return this.stmts.getSetting.get(key) as string | undefined;
  }
  setSetting(key: string, value: string): void {
    this.stmts.setSetting.run(key, value);
  }
  deleteSetting(key: string): void {
    this.stmts.deleteSetting.run(key);
  }

  // ---- remote side ----
  getSite(siteId: string): SiteRow | undefined {
    return this.stmts.getSite.get(siteId) as SiteRow | undefined;
  }
  insertSite(row: SiteRow): void {
    this.stmts.insertSite.run(row.site_id, row.org_id, row.name, row.created_at, row.last_seen_at);
  }
  touchSite(siteId: string, name: string, at: string): void {
    this.stmts.touchSite.run(name, at, siteId);
  }
  listSites(orgId: string): SiteRow[] {
    return this.stmts.listSites.all(orgId) as SiteRow[];
  }
  getIncarnation(siteId: string, incarnation: string): IncarnationRow | undefined {
    return this.stmts.getIncarnation.get(siteId, incarnation) as IncarnationRow | undefined;
  }
  insertIncarnation(row: IncarnationRow): void {
    this.stmts.insertIncarnation.run(row.site_id, row.incarnation, row.token, row.created_at, row.last_seen_at);
  }
  advanceToken(siteId: string, incarnation: string, token: string, at: string): void {
    this.stmts.advanceToken.run(token, at, siteId, incarnation);
  }
  listIncarnations(siteId: string): Array<{ incarnation: string; created_at: string; last_seen_at: string; blocks: number }> {
    return this.stmts.listIncarnations.all(siteId) as Array<{ incarnation: string; created_at: string; last_seen_at: string; blocks: number }>;
  }
  leaseOf(block: number): LeaseRow | undefined {
    return this.stmts.leaseOf.get(block) as LeaseRow | undefined;
  }
  insertLease(row: LeaseRow): void {
    this.stmts.insertLease.run(row.block, row.org_id, row.site_id, row.incarnation, row.kind, row.grant_token, row.leased_at);
  }
  leasesByGrant(siteId: string, incarnation: string, grantToken: string): number[] {
    return this.stmts.leasesByGrant.all(siteId, incarnation, grantToken) as number[];
  }
  leasesOfIncarnation(siteId: string, incarnation: string): number[] {
    return this.stmts.leasesOfIncarnation.all(siteId, incarnation) as number[];
  }
  /** A block this instance mints from itself (the remote's own blocks). */
  isOwnBlock(block: number): boolean {
    return this.stmts.ownBlock.get(block) !== undefined;
  }
  orgIds(): string[] {
    return this.stmts.orgIds.all() as string[];
  }
  orgName(orgId: string): string | undefined {
    return this.stmts.orgName.get(orgId) as string | undefined;
  }

  // ---- site side ----
  heldBlocks(): HeldBlock[] {
    return this.stmts.blocks.all() as HeldBlock[];
  }
  blockState(block: number): { state: string; used: number | null } | undefined {
    return this.stmts.blockState.get(block) as { state: string; used: number | null } | undefined;
  }
  /**
   * Blocks to claim when an incarnation registers: those taken locally (standalone) and those an
   * earlier incarnation retired (re-recorded at the remote in case it lost them; see docs/sync.md).
   */
  claimableBlocks(): number[] {
    return this.stmts.claimable.all() as number[];
  }
  activeLeased(): { blocks: number; slugs: number } {
    return this.stmts.activeLeased.get() as { blocks: number; slugs: number };
  }
  nextOffset(block: number): number | undefined {
    return this.stmts.nextOffset.get(block) as number | undefined;
  }
  /** No more slugs from this block; returns how many it had given. */
  exhaustBlock(block: number): number {
    const used = this.nextOffset(block) ?? 0;
    this.stmts.exhaust.run(block);
    return used;
  }
  confirmLocalBlock(block: number): void {
    this.stmts.toLease.run(block);
  }
  adoptLeasedBlock(block: number, at: string): void {
    this.stmts.adopt.run(block, at);
  }
  setBlockState(block: number, incarnation: string, state: 'leased' | 'dropped' | 'retired', used: number | null, reason: string | null, at: string): void {
    this.stmts.setBlockState.run(block, incarnation, state, used, reason, at);
  }
  openBlocks(): Array<{ block: number; next_offset: number }> {
    return this.stmts.openBlocks.all() as Array<{ block: number; next_offset: number }>;
  }
  insertConflict(kind: string, detail: unknown, at: string): void {
    this.stmts.insertConflict.run(kind, JSON.stringify(detail), at);
  }
  resolveConflict(id: number, at: string): void {
    this.stmts.resolveConflict.run(at, id);
  }
  conflicts(): ConflictRow[] {
    return this.stmts.conflicts.all() as ConflictRow[];
  }
  /** Slugs that batches still waiting or generating will take from the reserve. */
  pendingBatchDemand(): number {
    return this.stmts.pendingBatchDemand.get() as number;
  }
}
