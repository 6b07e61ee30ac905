import type { Database, Statement } from 'better-sqlite3';
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
      insertConflict: db.prepare('INSERT INTO sync_conflicts (kind, detail_json, detected_at, org_id, remote_id) VALUES (?, ?, ?, ?, ?)'),
      conflicts: db.prepare('SELECT * FROM sync_conflicts WHERE org_id = ? OR org_id IS NULL ORDER BY id'),
      allConflicts: db.prepare('SELECT * FROM sync_conflicts ORDER BY id'),
      conflictsForSite: db.prepare(
        "SELECT * FROM sync_conflicts WHERE org_id = ? AND id > ? AND json_extract(detail_json, '$.site_id') = ? ORDER BY id LIMIT ?",
      ),
      resolveConflict: db.prepare('UPDATE sync_conflicts SET resolved_at = COALESCE(resolved_at, ?) WHERE id = ? AND (org_id = ? OR org_id IS NULL)'),
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
  /** `orgId` null: a conflict of the instance itself (a block conflict), shown to every organization. */
  insertConflict(kind: string, detail: unknown, at: string, orgId: string | null, remoteId: number | null = null): void {
    this.stmts.insertConflict.run(kind, JSON.stringify(detail), at, orgId, remoteId);
  }
  resolveConflict(id: number, at: string, orgId: string): void {
    this.stmts.resolveConflict.run(at, id, orgId);
  }
  /** Remote side: conflicts found in `siteId`'s pushes after conflict `afterId` (sent down with the feed). */
  conflictsForSite(orgId: string, siteId: string, afterId: number, limit: number): ConflictRow[] {
    return this.stmts.conflictsForSite.all(orgId, afterId, siteId, limit) as ConflictRow[];
  }
  /** `orgId` undefined: every organization's (the instance's own view, e.g. the CLI). */
  conflicts(orgId?: string): ConflictRow[] {
    return (orgId === undefined ? this.stmts.allConflicts.all() : this.stmts.conflicts.all(orgId)) as ConflictRow[];
  }
  /** Slugs that batches still waiting or generating will take from the reserve. */
  pendingBatchDemand(): number {
    return this.stmts.pendingBatchDemand.get() as number;
  }
}

export interface Version {
  hlc: string;
  writer: string;
}

export interface OutboxRow {
  seq: number;
  entity: 'node' | 'rule' | 'template' | 'webhook' | 'batch' | 'api_key';
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

type Value = string | number | null;

/**
 * All SQL of push and pull: the change outbox (the site's queue, the remote's feed), versions and
 * tombstones, and the row writes of the apply path. Table and column names come from the fixed
 * entity list in apply.ts, never from the wire.
 */
export class ReplicationRepo {
  private readonly db: Database;
  private readonly stmts;
  private readonly cache = new Map<string, Statement>();

  constructor(db: Database) {
    this.db = db;
    this.stmts = {
      tombstone: db.prepare('SELECT hlc, writer FROM sync_tombstones WHERE entity = ? AND entity_id = ?'),
      addTombstone: db.prepare('INSERT OR IGNORE INTO sync_tombstones (entity, entity_id, hlc, writer, parent_id) VALUES (?, ?, ?, ?, ?)'),
      moveTombstone: db.prepare('UPDATE sync_tombstones SET hlc = ?, writer = ? WHERE entity = ? AND entity_id = ?'),
      ruleTombstones: db.prepare("SELECT entity_id AS id, hlc, writer FROM sync_tombstones WHERE entity = 'rule' AND parent_id = ?"),
      version: db.prepare('SELECT hlc, writer FROM sync_versions WHERE entity = ? AND entity_id = ? AND field = ?'),
      // Migration 059: applied edits (the outbox) and received-but-unapplied ones, after a version.
      editsAfter: db.prepare(
        `SELECT hlc, writer, fields FROM sync_outbox WHERE entity = @entity AND entity_id = @id AND op = 'upsert' AND (hlc > @hlc OR (hlc = @hlc AND writer > @writer))
         UNION ALL
         SELECT hlc, writer, fields FROM sync_unapplied WHERE entity = @entity AND entity_id = @id AND (hlc > @hlc OR (hlc = @hlc AND writer > @writer))
         ORDER BY hlc, writer`,
      ),
      recordUnapplied: db.prepare('INSERT OR IGNORE INTO sync_unapplied (entity, entity_id, hlc, writer, fields) VALUES (?, ?, ?, ?, ?)'),
      // Trigger-shaped (migration 055): called inside ChangeApplier.as, so it carries the change's writer and HLC.
      appendDelete: db.prepare(
        "INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled) VALUES (?, ?, ?, 'delete', ?, waymark_hlc(), waymark_writer(), waymark_group(), NULL, waymark_sync_applying(), waymark_sync_applying())",
      ),
      setVersion: db.prepare(
        `INSERT INTO sync_versions (entity, entity_id, field, hlc, writer) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (entity, entity_id, field) DO UPDATE SET hlc = excluded.hlc, writer = excluded.writer
            WHERE excluded.hlc > sync_versions.hlc OR (excluded.hlc = sync_versions.hlc AND excluded.writer > sync_versions.writer)`,
      ),
      slugHolder: db.prepare('SELECT node_id FROM slugs WHERE slug = ?').pluck(),
      insertSlug: db.prepare('INSERT INTO slugs (slug, org_id, node_id, minted_at) VALUES (?, ?, ?, ?)'),
      reserveSlug: db.prepare('INSERT OR IGNORE INTO slugs (slug, org_id, node_id, minted_at, deleted_at) VALUES (?, ?, ?, ?, ?)'),
      // The earliest deletion time wins, so two sites deleting the same node end up with the same time.
      tombstoneSlug: db.prepare('UPDATE slugs SET deleted_at = CASE WHEN deleted_at IS NULL OR deleted_at > @at THEN @at ELSE deleted_at END WHERE slug = @slug'),
      serialTaken: db.prepare('SELECT 1 FROM nodes WHERE org_id = ? AND serial = ? AND id <> ?').pluck(),
      nodeOrg: db.prepare('SELECT org_id FROM nodes WHERE id = ?').pluck(),
      ruleNode: db.prepare('SELECT node_id FROM rules WHERE id = ?').pluck(),
      templateExists: db.prepare('SELECT 1 FROM templates WHERE id = ?').pluck(),
      batchExists: db.prepare('SELECT 1 FROM batches WHERE id = ?').pluck(),
      batchStatus: db.prepare('SELECT status FROM batches WHERE id = ?').pluck(),
      maxEventSeq: db.prepare('SELECT COALESCE(MAX(seq), 0) FROM outbox_events').pluck(),
      insertScan: db.prepare(
        `INSERT OR IGNORE INTO scan_events (node_id, org_id, ts, device_type, os, browser, country, source, rule_id, outcome, is_bot, visitor_hash, sync_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      addScanCount: db.prepare('UPDATE nodes SET scan_count = scan_count + ? WHERE id = ?'),
      // site side
      // A site pushes only its bound organization's rows (another local organization is not paired).
      pendingCount: db.prepare('SELECT COUNT(*) FROM sync_outbox WHERE pushed = 0 AND org_id = ?').pluck(),
      pending: db.prepare('SELECT * FROM sync_outbox WHERE pushed = 0 AND org_id = ? ORDER BY seq LIMIT ?'),
      pendingGroupEnd: db.prepare('SELECT MAX(seq) FROM sync_outbox WHERE group_id = ? AND pushed = 0').pluck(),
      pendingHoldEnd: db.prepare('SELECT MAX(seq) FROM sync_outbox WHERE hold = ? AND pushed = 0').pluck(),
      pendingBetween: db.prepare('SELECT * FROM sync_outbox WHERE seq > ? AND seq <= ? AND pushed = 0 AND org_id = ? ORDER BY seq'),
      markPushed: db.prepare('UPDATE sync_outbox SET pushed = 1 WHERE pushed = 0 AND seq <= ?'),
      rewind: db.prepare("UPDATE sync_outbox SET pushed = 0 WHERE pulled = 0 AND entity <> 'api_key' AND seq > ?"),
      scansAfter: db.prepare(
        `SELECT id, node_id, ts, device_type, os, browser, country, source, rule_id, outcome, is_bot, visitor_hash,
                (SELECT writer FROM sync_scan_epochs WHERE first_id <= scan_events.id ORDER BY first_id DESC LIMIT 1) AS writer
           FROM scan_events WHERE id > ? AND sync_id IS NULL AND org_id = ? ORDER BY id LIMIT ?`,
      ),
      maxScanId: db.prepare('SELECT COALESCE(MAX(id), 0) FROM scan_events').pluck(),
      setScanEpoch: db.prepare('INSERT OR REPLACE INTO sync_scan_epochs (first_id, writer) VALUES (?, ?)'),
      hasScanEpoch: db.prepare('SELECT 1 FROM sync_scan_epochs LIMIT 1').pluck(),
      // remote side
      pushState: db.prepare('SELECT last_seq FROM sync_push_state WHERE site_id = ? AND incarnation = ?').pluck(),
      setPushState: db.prepare(
        `INSERT INTO sync_push_state (site_id, incarnation, last_seq) VALUES (?, ?, ?)
           ON CONFLICT (site_id, incarnation) DO UPDATE SET last_seq = excluded.last_seq`,
      ),
      feedHead: db.prepare('SELECT COALESCE(MAX(seq), 0) FROM sync_outbox WHERE org_id = ?').pluck(),
      feedAfter: db.prepare('SELECT * FROM sync_outbox WHERE seq > ? AND org_id = ? ORDER BY seq LIMIT ?'),
      groupEnd: db.prepare('SELECT MAX(seq) FROM sync_outbox WHERE group_id = ?').pluck(),
      feedBetween: db.prepare('SELECT * FROM sync_outbox WHERE seq > ? AND seq <= ? AND org_id = ? ORDER BY seq'),
    };
  }

  /** Runs `fn` in a savepoint (inside the caller's transaction): it is undone alone if it throws. */
  savepoint(fn: () => void): void {
    this.db.transaction(fn)();
  }

  // ---- versions and tombstones ----
  tombstone(entity: string, id: string): Version | undefined {
    return this.stmts.tombstone.get(entity, id) as Version | undefined;
  }
  /** `parentId`: a rule's node, so an earlier delete of the node finds the rule once its row is gone. */
  addTombstone(entity: string, id: string, v: Version, parentId: string | null = null): void {
    this.stmts.addTombstone.run(entity, id, v.hlc, v.writer, parentId);
  }
  /** An earlier delete arrived after a later one: the earliest is the delete everywhere. */
  moveTombstone(entity: string, id: string, v: Version): void {
    this.stmts.moveTombstone.run(v.hlc, v.writer, entity, id);
  }
  ruleTombstonesOf(nodeId: string): Array<Version & { id: string }> {
    return this.stmts.ruleTombstones.all(nodeId) as Array<Version & { id: string }>;
  }
  /** Feeds a delete that changed no row here (the entity was already gone) on to the other sides. */
  appendDelete(orgId: string, entity: string, id: string, fields: Record<string, unknown>): void {
    this.stmts.appendDelete.run(orgId, entity, id, JSON.stringify(fields));
  }
  /** A received edit that changed nothing here (kept so a delete that arrives later can log it). */
  recordUnapplied(entity: string, id: string, v: Version, fields: Record<string, unknown>): void {
    this.stmts.recordUnapplied.run(entity, id, v.hlc, v.writer, JSON.stringify(fields));
  }
  version(entity: string, id: string, field: string): Version | undefined {
    return this.stmts.version.get(entity, id, field) as Version | undefined;
  }
  /** Every edit of an entity made after `v` that this side received, applied or not, in HLC order. */
  editsAfter(entity: string, id: string, v: Version): Array<Version & { fields: Record<string, Value> }> {
    const rows = this.stmts.editsAfter.all({ entity, id, hlc: v.hlc, writer: v.writer }) as Array<Version & { fields: string }>;
    return rows.map((r) => ({ hlc: r.hlc, writer: r.writer, fields: JSON.parse(r.fields) as Record<string, Value> }));
  }
  row(table: string, id: string): Record<string, Value> | undefined {
    return this.stmt(`SELECT * FROM ${table} WHERE id = ?`).get(id) as Record<string, Value> | undefined;
  }
  /** Records a field's version unless the stored one is newer. */
  setVersion(entity: string, id: string, field: string, v: Version): void {
    this.stmts.setVersion.run(entity, id, field, v.hlc, v.writer);
  }

  // ---- rows of the apply path ----
  /** The organization of an entity row (a rule's is its node's; '' if that node is gone); undefined: no row. */
  orgOf(entity: string, table: string, id: string): string | undefined {
    if (entity === 'rule') {
      const nodeId = this.stmts.ruleNode.get(id) as string | undefined;
      return nodeId === undefined ? undefined : ((this.stmts.nodeOrg.get(nodeId) as string | undefined) ?? '');
    }
    return this.stmt(`SELECT org_id FROM ${table} WHERE id = ?`).pluck().get(id) as string | undefined;
  }
  /** The rules of a node (they go with it when it is deleted). */
  ruleIdsOf(nodeId: string): string[] {
    return this.stmt('SELECT id FROM rules WHERE node_id = ?').pluck().all(nodeId) as string[];
  }
  nodeOrg(nodeId: string): string | undefined {
    return this.stmts.nodeOrg.get(nodeId) as string | undefined;
  }
  insertRow(table: string, cols: string[], values: Value[]): void {
    this.stmt(`INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`).run(...values);
  }
  updateRow(table: string, id: string, cols: string[], values: Value[]): void {
    this.stmt(`UPDATE ${table} SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`).run(...values, id);
  }
  deleteRow(table: string, id: string): void {
    this.stmt(`DELETE FROM ${table} WHERE id = ?`).run(id);
  }
  slugHolder(slug: string): string | undefined {
    return this.stmts.slugHolder.get(slug) as string | undefined;
  }
  insertSlug(slug: string, orgId: string, nodeId: string, at: string): void {
    this.stmts.insertSlug.run(slug, orgId, nodeId, at);
  }
  /** The slug stays tombstoned, also where its node never arrived. */
  tombstoneSlug(slug: string, orgId: string, nodeId: string, at: string): void {
    this.stmts.reserveSlug.run(slug, orgId, nodeId, at, at);
    this.stmts.tombstoneSlug.run({ at, slug });
  }
  serialTaken(orgId: string, serial: Value, nodeId: string): boolean {
    return this.stmts.serialTaken.get(orgId, serial, nodeId) !== undefined;
  }
  templateExists(id: Value): boolean {
    return this.stmts.templateExists.get(id) !== undefined;
  }
  batchExists(id: Value): boolean {
    return this.stmts.batchExists.get(id) !== undefined;
  }
  batchStatus(id: string): string | undefined {
    return this.stmts.batchStatus.get(id) as string | undefined;
  }
  maxEventSeq(): number {
    return this.stmts.maxEventSeq.get() as number;
  }
  /** Inserts a pushed scan unless its global id is stored already; returns its local id, or null. */
  insertScan(orgId: string, s: Omit<ScanRow, 'id' | 'writer'> & { id: string }): number | null {
    const r = this.stmts.insertScan.run(s.node_id, orgId, s.ts, s.device_type, s.os, s.browser, s.country, s.source, s.rule_id, s.outcome, s.is_bot, s.visitor_hash, s.id);
    return r.changes === 0 ? null : Number(r.lastInsertRowid);
  }
  addScanCount(nodeId: string, n: number): void {
    this.stmts.addScanCount.run(n, nodeId);
  }

  // ---- site side: the queue ----
  pendingCount(orgId: string): number {
    return this.stmts.pendingCount.get(orgId) as number;
  }
  pending(orgId: string, limit: number): OutboxRow[] {
    return this.stmts.pending.all(orgId, limit) as OutboxRow[];
  }
  /** The last pending seq of a transaction group or of a batch's rows. */
  pendingEnd(by: 'group' | 'hold', key: string): number {
    return ((by === 'group' ? this.stmts.pendingGroupEnd : this.stmts.pendingHoldEnd).get(key) as number | null) ?? 0;
  }
  pendingBetween(after: number, upTo: number, orgId: string): OutboxRow[] {
    return this.stmts.pendingBetween.all(after, upTo, orgId) as OutboxRow[];
  }
  markPushed(upTo: number): void {
    this.stmts.markPushed.run(upTo);
  }
  /** This site's own rows after `seq` are pending again (API keys and pulled rows never are). */
  rewind(after: number): void {
    this.stmts.rewind.run(after);
  }
  scansAfter(after: number, orgId: string, limit: number): ScanRow[] {
    return this.stmts.scansAfter.all(after, orgId, limit) as ScanRow[];
  }
  maxScanId(): number {
    return this.stmts.maxScanId.get() as number;
  }
  setScanEpoch(firstId: number, writer: string): void {
    this.stmts.setScanEpoch.run(firstId, writer);
  }
  hasScanEpoch(): boolean {
    return this.stmts.hasScanEpoch.get() !== undefined;
  }

  // ---- remote side: push state and the feed ----
  pushState(siteId: string, incarnation: string): number | undefined {
    return this.stmts.pushState.get(siteId, incarnation) as number | undefined;
  }
  setPushState(siteId: string, incarnation: string, lastSeq: number): void {
    this.stmts.setPushState.run(siteId, incarnation, lastSeq);
  }
  feedHead(orgId: string): number {
    return this.stmts.feedHead.get(orgId) as number;
  }
  feedAfter(after: number, orgId: string, limit: number): OutboxRow[] {
    return this.stmts.feedAfter.all(after, orgId, limit) as OutboxRow[];
  }
  groupEnd(groupId: string): number {
    return (this.stmts.groupEnd.get(groupId) as number | null) ?? 0;
  }
  feedBetween(after: number, upTo: number, orgId: string): OutboxRow[] {
    return this.stmts.feedBetween.all(after, upTo, orgId) as OutboxRow[];
  }

  private stmt(sql: string): Statement {
    let s = this.cache.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.cache.set(sql, s);
    }
    return s;
  }
}
