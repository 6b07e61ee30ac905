import type { CaptureState } from '../../db/capture.ts';
import type { SyncChangeT, SyncScanT } from '../../schemas/sync.ts';
import { newer } from './hlc.ts';
import type { ReplicationRepo, Version } from './repo.ts';

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
  private readonly repo: ReplicationRepo;
  private readonly state: CaptureState;

  constructor(repo: ReplicationRepo, state: CaptureState) {
    this.repo = repo;
    this.state = state;
  }

  /**
   * Applies one change; call inside a transaction. A change this side cannot store (a constraint
   * no rule above foresaw, e.g. an NFC tag bound to two nodes) is rolled back alone and logged as
   * `not_applicable`: one bad change must never block the queue behind it.
   */
  apply(change: SyncChangeT, ctx: ApplyContext): void {
    try {
      this.repo.savepoint(() => this.applyOne(change, ctx));
    } catch (err) {
      if (!(err instanceof Error && 'code' in err && String(err.code).startsWith('SQLITE_CONSTRAINT'))) throw err;
      ctx.conflict('not_applicable', { entity: change.entity, entity_id: change.entity_id, writer: change.writer, hlc: change.hlc, fields: change.fields, error: err.message });
    }
  }

  /** Stores pushed scans once each (by global id) and raises scan_count; returns the new ones with their local ids. */
  applyScans(scans: SyncScanT[], orgId: string): Array<SyncScanT & { local: number }> {
    const counts = new Map<string, number>();
    const added: Array<SyncScanT & { local: number }> = [];
    for (const s of scans) {
      if (this.repo.nodeOrg(s.node_id) !== orgId) continue; // node deleted (or never accepted) here
      const local = this.repo.insertScan(orgId, s);
      if (local === null) continue;
      added.push({ ...s, local });
      if (!s.is_bot) counts.set(s.node_id, (counts.get(s.node_id) ?? 0) + 1);
    }
    for (const [nodeId, n] of counts) this.repo.addScanCount(nodeId, n);
    return added;
  }

  private applyOne(change: SyncChangeT, ctx: ApplyContext): void {
    const spec = ENTITY_TABLES[change.entity];
    this.state.hlc.receive(change.hlc);
    const dead = this.repo.tombstone(change.entity, change.entity_id);
    if (change.op === 'delete') {
      if (!dead) this.remove(change, ctx);
      else if (newer(dead, change)) this.antedate(change, dead, ctx);
      return;
    }
    if (dead) {
      // Delete is final: the edit is not applied, whatever its HLC. It is logged when it was made
      // after the delete; an older one (e.g. a replay of the creation) lost, and is kept in case
      // an earlier delete arrives later (antedate).
      if (!newer(change, dead)) {
        this.repo.recordUnapplied(change.entity, change.entity_id, change, change.fields);
        return;
      }
      ctx.conflict('edit_after_delete', { entity: change.entity, entity_id: change.entity_id, writer: change.writer, hlc: change.hlc, fields: change.fields, deleted_by: dead.writer, deleted_hlc: dead.hlc });
      return;
    }
    const org = this.repo.orgOf(change.entity, spec.table, change.entity_id);
    if (org === undefined) this.insert(change, ctx);
    else if (org === ctx.orgId) this.update(change, ctx);
    // else: the id belongs to another organization here; a site cannot touch it.
  }

  private remove(change: SyncChangeT, ctx: ApplyContext): void {
    const spec = ENTITY_TABLES[change.entity];
    const org = this.repo.orgOf(change.entity, spec.table, change.entity_id);
    if (org !== undefined && org !== ctx.orgId) return;
    if (org !== undefined) {
      this.logLaterEdits(change, ctx);
      // A node's rules go with it: rules created or edited after its delete are lost edits too.
      if (change.entity === 'node') for (const ruleId of this.repo.ruleIdsOf(change.entity_id)) this.logLaterEdits({ ...change, entity: 'rule', entity_id: ruleId }, ctx);
    }
    this.repo.addTombstone(change.entity, change.entity_id, change);
    this.as(change, () => {
      if (change.entity === 'node' && typeof change.fields.slug === 'string') {
        // The origin's deletion time when the change carries it (since 058), so tombstones agree everywhere.
        const at = typeof change.fields.deleted_at === 'string' ? change.fields.deleted_at : ctx.now;
        this.repo.tombstoneSlug(change.fields.slug, ctx.orgId, change.entity_id, at);
      }
      if (org !== undefined) this.repo.deleteRow(spec.table, change.entity_id);
    });
    if (org !== undefined) ctx.applied?.(change, 'deleted');
  }

  /**
   * A delete arriving after edits that were made after it (by HLC): the edits lose all the same
   * (delete is final) and are logged, as they would have been had they arrived after the delete.
   */
  private logLaterEdits(change: SyncChangeT, ctx: ApplyContext, upTo?: Version): void {
    for (const e of this.repo.editsAfter(change.entity, change.entity_id, change)) {
      if (upTo && newer(e, upTo)) break; // logged already, against the later delete
      ctx.conflict('edit_after_delete', { entity: change.entity, entity_id: change.entity_id, writer: e.writer, hlc: e.hlc, fields: e.fields, deleted_by: change.writer, deleted_hlc: change.hlc });
    }
  }

  /**
   * A delete older than the one this side already applied (two sides deleted the entity offline):
   * the earliest delete is the delete. Its tombstone moves back (a node's rules' and slug's too),
   * the edits made between the two deletes are logged as lost, and the delete goes on into this
   * side's feed, so every instance ends with the same tombstones.
   */
  private antedate(change: SyncChangeT, dead: Version, ctx: ApplyContext): void {
    this.logLaterEdits(change, ctx, dead);
    this.repo.moveTombstone(change.entity, change.entity_id, change);
    if (change.entity === 'node') {
      for (const rule of this.repo.ruleTombstonesOf(change.entity_id)) {
        if (!newer(rule, change)) continue; // deleted on its own before the node
        this.logLaterEdits({ ...change, entity: 'rule', entity_id: rule.id }, ctx, rule);
        this.repo.moveTombstone('rule', rule.id, change);
      }
    }
    this.as(change, () => {
      if (change.entity === 'node' && typeof change.fields.slug === 'string' && typeof change.fields.deleted_at === 'string') {
        this.repo.tombstoneSlug(change.fields.slug, ctx.orgId, change.entity_id, change.fields.deleted_at);
      }
      this.repo.appendDelete(ctx.orgId, change.entity, change.entity_id, change.fields);
    });
  }

  private insert(change: SyncChangeT, ctx: ApplyContext): void {
    const spec = ENTITY_TABLES[change.entity];
    const f: Record<string, Value> = {};
    for (const c of spec.cols) f[c] = change.fields[c] ?? null;
    // An edit of something this side never had (e.g. a node refused for its slug): nothing to edit.
    if (spec.required.some((c) => f[c] === null || f[c] === undefined)) return;
    const extra: Record<string, Value> = { org_id: ctx.orgId };
    let slugToInsert: string | null = null;
    switch (change.entity) {
      case 'node': {
        const slug = String(f.slug);
        const refused = ctx.checkSlug?.(slug) ?? null;
        if (refused) {
          ctx.conflict(refused, { entity_id: change.entity_id, slug, writer: change.writer, hlc: change.hlc, fields: change.fields });
          return;
        }
        const holder = this.repo.slugHolder(slug);
        if (holder !== undefined && holder !== change.entity_id) {
          ctx.conflict('slug_duplicate', { entity_id: change.entity_id, slug, holder, writer: change.writer, hlc: change.hlc, fields: change.fields });
          return;
        }
        if (f.serial !== null && this.repo.serialTaken(ctx.orgId, f.serial!, change.entity_id)) {
          // Serials are printed labels, never refused: both nodes keep theirs (migration 055 made
          // serials non-unique for this).
          ctx.conflict('serial_clash', { entity_id: change.entity_id, serial: f.serial, writer: change.writer, hlc: change.hlc });
        }
        if (f.template_id !== null && !this.repo.templateExists(f.template_id!)) f.template_id = null;
        if (f.batch_id !== null && !this.repo.batchExists(f.batch_id!)) f.batch_id = null;
        if (holder === undefined) slugToInsert = slug;
        break;
      }
      case 'rule':
        if (this.repo.nodeOrg(String(f.node_id)) !== ctx.orgId) {
          // A rule of a deleted node: dead too (so its later edits are logged like any edit of a
          // deleted entity), and logged itself when it was made after the delete.
          const nodeDead = this.repo.tombstone('node', String(f.node_id));
          if (nodeDead) {
            this.repo.addTombstone('rule', change.entity_id, nodeDead, String(f.node_id));
            if (newer(change, nodeDead)) {
              ctx.conflict('edit_after_delete', { entity: 'rule', entity_id: change.entity_id, node_id: f.node_id, writer: change.writer, hlc: change.hlc, fields: change.fields, deleted_by: nodeDead.writer, deleted_hlc: nodeDead.hlc });
            } else {
              this.repo.recordUnapplied('rule', change.entity_id, change, change.fields);
            }
          }
          return;
        }
        delete extra.org_id;
        break;
      case 'batch':
        if (f.template_id !== null && !this.repo.templateExists(f.template_id!)) f.template_id = null;
        // Batches travel once generated: they arrive ready, their nodes with them.
        Object.assign(extra, { status: 'ready', nodes_generated: f.quantity!, updated_at: f.created_at! });
        break;
      case 'webhook':
        // Only events after its arrival here are delivered (from this instance's own outbox).
        extra.start_seq = this.repo.maxEventSeq();
        break;
      default:
    }
    const cols = ['id', ...spec.cols, ...Object.keys(extra)];
    const values = [change.entity_id, ...spec.cols.map((c) => f[c]!), ...Object.values(extra)];
    this.as(change, () => {
      const minted = typeof change.fields.minted_at === 'string' ? change.fields.minted_at : String(f.created_at);
      if (slugToInsert) this.repo.insertSlug(slugToInsert, ctx.orgId, change.entity_id, minted);
      this.repo.insertRow(spec.table, cols, values);
    });
    for (const c of spec.cols) this.repo.setVersion(change.entity, change.entity_id, c, change);
    ctx.applied?.(change, 'created');
  }

  private update(change: SyncChangeT, ctx: ApplyContext): void {
    const spec = ENTITY_TABLES[change.entity];
    const won: string[] = [];
    for (const [field, value] of Object.entries(change.fields)) {
      if (!(spec.cols as readonly string[]).includes(field) || field === 'slug' || field === 'created_at') continue;
      if (value === undefined) continue;
      const v = this.repo.version(change.entity, change.entity_id, field);
      if (v && !newer(change, v)) continue;
      won.push(field);
    }
    if (won.length === 0) {
      this.repo.recordUnapplied(change.entity, change.entity_id, change, change.fields);
      return;
    }
    const values = won.map((field) => {
      const v = change.fields[field] ?? null;
      // A reference to something this side does not have is cleared (as its deletion would).
      if (v !== null && field === 'template_id' && !this.repo.templateExists(v)) return null;
      if (v !== null && field === 'batch_id' && !this.repo.batchExists(v)) return null;
      return v;
    });
    this.as(change, () => this.repo.updateRow(spec.table, change.entity_id, won, values));
    for (const field of won) this.repo.setVersion(change.entity, change.entity_id, field, change);
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
}
