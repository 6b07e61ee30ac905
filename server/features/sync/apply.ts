import type { Database, Statement } from 'better-sqlite3';
import { captureState, type CaptureState } from '../../db/capture.ts';
import type { SyncChangeT, SyncScanT } from '../../schemas/sync.ts';
import { newer } from './hlc.ts';

/**
 * What travels per entity: the table and the synced columns (the same lists as the capture
 * triggers of migration 055). Not synced: org_id (each side maps it to its own organization),
 * scan_count (derived from scans), batch job state, webhook delivery state, key usage.
 */
export const ENTITY_TABLES = {
  node: {
    table: 'nodes',
    cols: ['slug', 'label', 'function_type', 'payload_json', 'status', 'hardware_id', 'template_id', 'batch_id', 'serial', 'serial_number', 'created_at', 'updated_at'],
    required: ['slug', 'label', 'function_type', 'payload_json', 'status', 'created_at', 'updated_at'],
  },
  rule: {
    table: 'rules',
    cols: ['node_id', 'rule_type', 'conditions_json', 'function_type', 'payload_json', 'priority', 'enabled', 'created_at', 'updated_at'],
    required: ['node_id', 'rule_type', 'conditions_json', 'function_type', 'payload_json', 'created_at', 'updated_at'],
  },
  template: {
    table: 'templates',
    cols: ['name', 'function_type', 'payload_json', 'locked_fields_json', 'created_at', 'updated_at'],
    required: ['name', 'function_type', 'payload_json', 'created_at', 'updated_at'],
  },
  webhook: {
    table: 'webhooks',
    cols: ['url', 'events_json', 'description', 'active', 'secret', 'previous_secret', 'previous_secret_expires_at', 'created_at', 'updated_at'],
    required: ['url', 'events_json', 'secret', 'created_at', 'updated_at'],
  },
  batch: {
    table: 'batches',
    cols: ['label', 'prefix', 'quantity', 'serial_start', 'function_type', 'base_payload_json', 'template_id', 'created_at'],
    required: ['label', 'prefix', 'quantity', 'serial_start', 'function_type', 'created_at'],
  },
  api_key: {
    table: 'api_keys',
    cols: ['name', 'prefix', 'key_hash', 'plan', 'limits_json', 'created_at', 'revoked_at'],
    required: ['name', 'prefix', 'key_hash', 'plan', 'created_at'],
  },
} as const;

export type EntityName = keyof typeof ENTITY_TABLES;

export type ConflictKind = 'edit_after_delete' | 'slug_outside_lease' | 'slug_duplicate' | 'serial_clash' | 'not_applicable';

export interface ApplyContext {
  /** The local organization the change lands in. */
  orgId: string;
  /** Remote side: the slug check for nodes a site creates (null = accepted). */
  checkSlug?: (slug: string) => 'slug_outside_lease' | null;
  /** Records a conflict (the change is still acknowledged). */
  conflict: (kind: ConflictKind, detail: Record<string, unknown>) => void;
  /** Told of every node or batch change that took effect here (the remote emits webhook events). */
  applied?: (change: SyncChangeT, effect: 'created' | 'updated' | 'deleted') => void;
  now: string;
}

type Value = string | number | null;

/**
 * Applies remote changes with field-level last-writer-wins, on either side. Writes go straight to
 * the tables (never through the services' business rules); the capture triggers record them with
 * the change's own writer and HLC, so on a remote they enter the feed as they were resolved, and
 * sync_versions keeps the winning version of every field.
 */
export class ChangeApplier {
  private readonly db: Database;
  private readonly state: CaptureState;
  private readonly stmts: Record<string, Statement>;
  private readonly cache = new Map<string, Statement>();

  constructor(db: Database) {
    this.db = db;
    this.state = captureState(db);
    this.stmts = {
      tombstone: db.prepare('SELECT hlc, writer FROM sync_tombstones WHERE entity = ? AND entity_id = ?'),
      addTombstone: db.prepare('INSERT OR IGNORE INTO sync_tombstones (entity, entity_id, hlc, writer) VALUES (?, ?, ?, ?)'),
      version: db.prepare('SELECT hlc, writer FROM sync_versions WHERE entity = ? AND entity_id = ? AND field = ?'),
      setVersion: db.prepare(
        `INSERT INTO sync_versions (entity, entity_id, field, hlc, writer) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (entity, entity_id, field) DO UPDATE SET hlc = excluded.hlc, writer = excluded.writer
            WHERE excluded.hlc > sync_versions.hlc OR (excluded.hlc = sync_versions.hlc AND excluded.writer > sync_versions.writer)`,
      ),
      slugRow: db.prepare('SELECT node_id, org_id, deleted_at FROM slugs WHERE slug = ?'),
      insertSlug: db.prepare('INSERT INTO slugs (slug, org_id, node_id, minted_at) VALUES (?, ?, ?, ?)'),
      tombstoneSlug: db.prepare('UPDATE slugs SET deleted_at = COALESCE(deleted_at, ?) WHERE slug = ?'),
      reserveSlug: db.prepare('INSERT OR IGNORE INTO slugs (slug, org_id, node_id, minted_at, deleted_at) VALUES (?, ?, ?, ?, ?)'),
      serialTaken: db.prepare('SELECT id FROM nodes WHERE org_id = ? AND serial = ? AND id <> ?').pluck(),
      nodeOrg: db.prepare('SELECT org_id FROM nodes WHERE id = ?').pluck(),
      exists: db.prepare('SELECT 1 FROM templates WHERE id = ?').pluck(),
      batchExists: db.prepare('SELECT 1 FROM batches WHERE id = ?').pluck(),
      maxOutbox: db.prepare('SELECT COALESCE(MAX(seq), 0) FROM outbox_events').pluck(),
      scanInsert: db.prepare(
        `INSERT OR IGNORE INTO scan_events (node_id, org_id, ts, device_type, os, browser, country, source, rule_id, outcome, is_bot, visitor_hash, sync_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      addCount: db.prepare('UPDATE nodes SET scan_count = scan_count + ? WHERE id = ?'),
    };
  }

  /**
   * Applies one change; call inside a transaction. A change this side cannot store (a constraint
   * no rule above foresaw, e.g. an NFC tag bound to two nodes) is rolled back alone and logged as
   * `not_applicable`: one bad change must never block the queue behind it.
   */
  apply(change: SyncChangeT, ctx: ApplyContext): void {
    try {
      this.db.transaction(() => this.applyOne(change, ctx))();
    } catch (err) {
      if (!(err instanceof Error && 'code' in err && String(err.code).startsWith('SQLITE_CONSTRAINT'))) throw err;
      ctx.conflict('not_applicable', { entity: change.entity, entity_id: change.entity_id, writer: change.writer, hlc: change.hlc, fields: change.fields, error: err.message });
    }
  }

  private applyOne(change: SyncChangeT, ctx: ApplyContext): void {
    const spec = ENTITY_TABLES[change.entity];
    this.state.hlc.receive(change.hlc);
    const dead = this.stmts.tombstone!.get(change.entity, change.entity_id) as { hlc: string; writer: string } | undefined;
    if (change.op === 'delete') {
      if (!dead) this.remove(change, spec.table, ctx);
      return;
    }
    if (dead) {
      // Delete is final: the edit is not applied, whatever its HLC. It is logged when it was made
      // after the delete; an older one (e.g. a replay of the creation) simply lost.
      if (!newer(change, dead)) return;
      ctx.conflict('edit_after_delete', { entity: change.entity, entity_id: change.entity_id, writer: change.writer, hlc: change.hlc, fields: change.fields, deleted_by: dead.writer, deleted_hlc: dead.hlc });
      return;
    }
    const row = this.orgOf(change.entity, change.entity_id);
    if (row === undefined) this.insert(change, ctx);
    else if (row === ctx.orgId) this.update(change, ctx);
    // else: the id belongs to another organization here; a site cannot touch it.
  }

  /** Stores pushed scans once each (by global id) and raises scan_count; returns the new ones with their local ids. */
  applyScans(scans: SyncScanT[], orgId: string): Array<SyncScanT & { local: number }> {
    const counts = new Map<string, number>();
    const added: Array<SyncScanT & { local: number }> = [];
    for (const s of scans) {
      if (this.stmts.nodeOrg!.get(s.node_id) !== orgId) continue; // node deleted (or never accepted) here
      const r = this.stmts.scanInsert!.run(s.node_id, orgId, s.ts, s.device_type, s.os, s.browser, s.country, s.source, s.rule_id, s.outcome, s.is_bot, s.visitor_hash, s.id);
      if (r.changes === 0) continue;
      added.push({ ...s, local: Number(r.lastInsertRowid) });
      if (!s.is_bot) counts.set(s.node_id, (counts.get(s.node_id) ?? 0) + 1);
    }
    for (const [nodeId, n] of counts) this.stmts.addCount!.run(n, nodeId);
    return added;
  }

  private orgOf(entity: EntityName, entityId: string): string | undefined {
    if (entity === 'rule') {
      const nodeId = this.stmt('SELECT node_id FROM rules WHERE id = ?').pluck().get(entityId) as string | undefined;
      return nodeId === undefined ? undefined : ((this.stmts.nodeOrg!.get(nodeId) as string | undefined) ?? '');
    }
    return this.stmt(`SELECT org_id FROM ${ENTITY_TABLES[entity].table} WHERE id = ?`).pluck().get(entityId) as string | undefined;
  }

  private remove(change: SyncChangeT, table: string, ctx: ApplyContext): void {
    const org = this.orgOf(change.entity, change.entity_id);
    if (org !== undefined && org !== ctx.orgId) return;
    this.stmts.addTombstone!.run(change.entity, change.entity_id, change.hlc, change.writer);
    if (org !== undefined) this.logLaterWrites(change, ctx);
    this.as(change, () => {
      if (change.entity === 'node' && typeof change.fields.slug === 'string') {
        // The slug stays tombstoned everywhere, even where the node never arrived.
        this.stmts.reserveSlug!.run(change.fields.slug, ctx.orgId, change.entity_id, ctx.now, ctx.now);
        this.stmts.tombstoneSlug!.run(ctx.now, change.fields.slug);
      }
      if (org !== undefined) this.stmt(`DELETE FROM ${table} WHERE id = ?`).run(change.entity_id);
    });
    if (org !== undefined) ctx.applied?.(change, 'deleted');
  }

  /**
   * Writes made after this delete (by HLC) that arrived before it are lost with the entity: log
   * them as edits after the delete, like those arriving later (which of the two reaches a side
   * first must not decide whether a lost edit is reported). A node's rules count as its writes.
   */
  private logLaterWrites(del: SyncChangeT, ctx: ApplyContext): void {
    const later = this.stmt(
      `SELECT entity, entity_id, hlc, writer, fields FROM sync_outbox
        WHERE op = 'upsert' AND hlc > ? AND writer <> ?
          AND ((entity = ? AND entity_id = ?) OR (? = 'node' AND entity = 'rule' AND entity_id IN (SELECT id FROM rules WHERE node_id = ?)))
        ORDER BY seq`,
    ).all(del.hlc, del.writer, del.entity, del.entity_id, del.entity, del.entity_id) as Array<{ entity: string; entity_id: string; hlc: string; writer: string; fields: string }>;
    for (const w of later) {
      ctx.conflict('edit_after_delete', {
        entity: w.entity,
        entity_id: w.entity_id,
        writer: w.writer,
        hlc: w.hlc,
        fields: JSON.parse(w.fields) as unknown,
        deleted_by: del.writer,
        deleted_hlc: del.hlc,
      });
    }
  }

  private insert(change: SyncChangeT, ctx: ApplyContext): void {
    const spec = ENTITY_TABLES[change.entity];
    const f: Record<string, Value> = {};
    for (const c of spec.cols) f[c] = change.fields[c] ?? null;
    // An edit of something this side never had (e.g. a node refused for its slug): nothing to edit.
    if (spec.required.some((c) => f[c] === null || f[c] === undefined)) return;
    const extra: Record<string, Value> = {};
    switch (change.entity) {
      case 'node': {
        const slug = String(f.slug);
        const refused = ctx.checkSlug?.(slug) ?? null;
        if (refused) {
          ctx.conflict(refused, { entity_id: change.entity_id, slug, writer: change.writer, hlc: change.hlc, fields: change.fields });
          return;
        }
        const taken = this.stmts.slugRow!.get(slug) as { node_id: string; deleted_at: string | null } | undefined;
        if (taken && taken.node_id !== change.entity_id) {
          ctx.conflict('slug_duplicate', { entity_id: change.entity_id, slug, holder: taken.node_id, writer: change.writer, hlc: change.hlc, fields: change.fields });
          return;
        }
        if (f.serial !== null && this.stmts.serialTaken!.get(ctx.orgId, f.serial, change.entity_id)) {
          // Serials are printed labels, never refused: both nodes keep theirs (migration 055 made
          // serials non-unique for this).
          ctx.conflict('serial_clash', { entity_id: change.entity_id, serial: f.serial, writer: change.writer, hlc: change.hlc });
        }
        if (f.template_id !== null && !this.stmts.exists!.get(f.template_id)) f.template_id = null;
        if (f.batch_id !== null && !this.stmts.batchExists!.get(f.batch_id)) f.batch_id = null;
        extra.org_id = ctx.orgId;
        this.as(change, () => {
          if (!taken) this.stmts.insertSlug!.run(slug, ctx.orgId, change.entity_id, f.created_at);
        });
        break;
      }
      case 'rule':
        if (this.stmts.nodeOrg!.get(f.node_id) !== ctx.orgId) {
          // A rule of a deleted node is an edit after its delete: logged, not applied, and the
          // rule is dead too, so its later edits are logged the same way.
          const nodeDead = this.stmts.tombstone!.get('node', f.node_id) as { hlc: string; writer: string } | undefined;
          if (nodeDead) {
            this.stmts.addTombstone!.run('rule', change.entity_id, nodeDead.hlc, nodeDead.writer);
            ctx.conflict('edit_after_delete', { entity: 'rule', entity_id: change.entity_id, node_id: f.node_id, writer: change.writer, hlc: change.hlc, fields: change.fields, deleted_by: nodeDead.writer, deleted_hlc: nodeDead.hlc });
          }
          return;
        }
        break;
      case 'batch':
        if (f.template_id !== null && !this.stmts.exists!.get(f.template_id)) f.template_id = null;
        // Batches travel once generated: they arrive ready, their nodes with them.
        Object.assign(extra, { org_id: ctx.orgId, status: 'ready', nodes_generated: f.quantity, updated_at: f.created_at });
        break;
      case 'webhook':
        // Only events after its arrival here are delivered (from this instance's own outbox).
        Object.assign(extra, { org_id: ctx.orgId, start_seq: this.stmts.maxOutbox!.get() as number });
        break;
      default:
        extra.org_id = ctx.orgId;
    }
    const cols = ['id', ...spec.cols, ...Object.keys(extra)];
    const values = [change.entity_id, ...spec.cols.map((c) => f[c]), ...Object.values(extra)];
    this.as(change, () => {
      this.stmt(`INSERT INTO ${spec.table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`).run(...values);
    });
    for (const c of spec.cols) this.stmts.setVersion!.run(change.entity, change.entity_id, c, change.hlc, change.writer);
    ctx.applied?.(change, 'created');
  }

  private update(change: SyncChangeT, ctx: ApplyContext): void {
    const spec = ENTITY_TABLES[change.entity];
    const won: string[] = [];
    for (const [field, value] of Object.entries(change.fields)) {
      if (!(spec.cols as readonly string[]).includes(field) || field === 'slug' || field === 'created_at') continue;
      if (value === undefined) continue;
      const v = this.stmts.version!.get(change.entity, change.entity_id, field) as { hlc: string; writer: string } | undefined;
      if (v && !newer(change, v)) continue;
      won.push(field);
    }
    if (won.length === 0) return;
    const refs: Record<string, Statement | undefined> = { template_id: this.stmts.exists, batch_id: this.stmts.batchExists };
    const values = won.map((f) => {
      const v = change.fields[f] ?? null;
      const ref = refs[f];
      return ref && v !== null && !ref.get(v) ? null : v;
    });
    this.as(change, () => {
      this.stmt(`UPDATE ${spec.table} SET ${won.map((f) => `${f} = ?`).join(', ')} WHERE id = ?`).run(...values, change.entity_id);
    });
    for (const f of won) this.stmts.setVersion!.run(change.entity, change.entity_id, f, change.hlc, change.writer);
    ctx.applied?.(change, 'updated');
  }

  /** Runs writes recorded under the change's own writer and HLC (and, on a site, as pulled). */
  private as(change: SyncChangeT, fn: () => void): void {
    this.state.applying = { writer: change.writer, hlc: change.hlc };
    try {
      fn();
    } finally {
      this.state.applying = null;
    }
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
