import type { ChangeCapture } from '../../db/changeCapture.ts';
import type { Executor } from '../../db/store.ts';
import type { ScanRefusalT, SyncChangeT, SyncScanT } from '../../schemas/sync.ts';
import { newer } from '../../platform/hlc.ts';
import { addScanCountsInTx } from '../nodes/index.ts';
import type { ReplicationRepo, Version } from './repo.ts';
import { SealedFields } from './sealedFields.ts';

/**
 * What travels per entity: the table and the synced columns (the same lists as the capture
 * triggers of migration 055). Not synced: org_id (each side maps it to its own organization),
 * scan_count (derived from scans), batch job state, webhook delivery state, key usage.
 */
export const ENTITY_TABLES = {
  node: {
    table: 'nodes',
    cols: ['slug', 'label', 'function_type', 'payload_json', 'status', 'hardware_id', 'template_id', 'batch_id', 'serial', 'serial_number', 'created_at', 'updated_at', 'expires_at', 'max_scans', 'password_hash', 'after_limit_json'],
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
  // An organization's settings (migrations 066, 086): one row per organization, keyed by its id,
  // which differs on each side, so apply maps it to the local organization (settingsOfLocalOrg).
  // The QR style and the logo are one field each: each wins or loses as a whole.
  organization: {
    table: 'organization_settings',
    cols: ['scan_base', 'qr_style_json', 'qr_logo_json', 'updated_at'],
    required: ['updated_at'],
  },
} as const;

export type EntityName = keyof typeof ENTITY_TABLES;

export type ConflictKind = 'edit_after_delete' | 'slug_outside_lease' | 'slug_duplicate' | 'serial_clash' | 'not_applicable';

export interface ApplyContext {
  /** The local organization the change lands in. */
  orgId: string;
  /** Remote side: the slug check for nodes a site creates (null = accepted). */
  checkSlug?: (slug: string) => Promise<'slug_outside_lease' | null>;
  /** Records a conflict in the transaction (the change is still acknowledged). */
  conflict: (kind: ConflictKind, detail: Record<string, unknown>) => Promise<void>;
  /** Told of every node or batch change that took effect here, in the transaction (the remote emits webhook events). */
  applied?: (change: SyncChangeT, effect: 'created' | 'updated' | 'deleted') => Promise<void>;
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
  private readonly capture: ChangeCapture;
  private readonly sealed: SealedFields;

  constructor(repo: ReplicationRepo, capture: ChangeCapture, sealed: SealedFields = new SealedFields(null)) {
    this.repo = repo;
    this.capture = capture;
    this.sealed = sealed;
  }

  /**
   * Applies one change; call inside a transaction. A change this side cannot store (a constraint
   * no rule above foresaw, e.g. an NFC tag bound to two nodes) is rolled back alone and logged as
   * `not_applicable`: one bad change must never block the queue behind it.
   */
  async apply(tx: Executor, received: SyncChangeT, ctx: ApplyContext): Promise<void> {
    // Secrets arrive in clear and are kept sealed under this side's key (sealedFields.ts).
    const change = this.sealed.fromWire(settingsOfLocalOrg(received, ctx.orgId));
    try {
      await this.repo.savepoint(tx, () => this.applyOne(tx, change, ctx));
    } catch (err) {
      if (!isConstraintError(err)) throw err;
      await ctx.conflict('not_applicable', { entity: change.entity, entity_id: change.entity_id, writer: change.writer, hlc: change.hlc, fields: change.fields, error: err.message });
    }
  }

  /**
   * Stores pushed scans once each (by global id) and raises scan_count. `added`: the new ones with
   * their local ids; `stored`: how many are here now (new or already there); `refused`: scans of
   * a node of another organization, or of a node this instance does not have (deleted here, or
   * never accepted), which are not stored.
   */
  async applyScans(
    tx: Executor,
    scans: SyncScanT[],
    orgId: string,
  ): Promise<{ added: Array<SyncScanT & { local: number }>; stored: number; refused: ScanRefusalT[] }> {
    const counts = new Map<string, number>();
    const added: Array<SyncScanT & { local: number }> = [];
    const refused: ScanRefusalT[] = [];
    let stored = 0;
    for (const s of scans) {
      const owner = await this.repo.nodeOrg(tx, s.node_id);
      if (owner !== orgId) {
        refused.push({ id: s.id, node_id: s.node_id, reason: owner === undefined ? 'unknown_node' : 'node_of_another_organization' });
        continue;
      }
      stored++;
      const local = await this.repo.insertScan(tx, orgId, s);
      if (local === null) continue;
      added.push({ ...s, local });
      if (!s.is_bot) counts.set(s.node_id, (counts.get(s.node_id) ?? 0) + 1);
    }
    // The nodes feature is the one writer of `nodes` (scan_count included).
    await addScanCountsInTx(tx, counts);
    return { added, stored, refused };
  }

  private async applyOne(tx: Executor, change: SyncChangeT, ctx: ApplyContext): Promise<void> {
    const spec = ENTITY_TABLES[change.entity];
    this.capture.hlc.receive(change.hlc);
    // Many processes (PostgreSQL): nothing else changes this entity until the transaction ends.
    const ruleNode = change.entity === 'rule' ? ((await this.repo.ruleNode(tx, change.entity_id)) ?? stringOrUndefined(change.fields.node_id)) : undefined;
    await this.repo.lockEntity(tx, change.entity, spec.table, change.entity_id, ruleNode);
    const dead = await this.repo.tombstone(tx, change.entity, change.entity_id);
    if (change.op === 'delete') {
      if (!dead) await this.remove(tx, change, ctx);
      else if (newer(dead, change)) await this.antedate(tx, change, dead, ctx);
      return;
    }
    if (dead) {
      // Delete is final: the edit is not applied, whatever its HLC. It is logged when it was made
      // after the delete; an older one (e.g. a replay of the creation) lost, and is kept in case
      // an earlier delete arrives later (antedate).
      if (!newer(change, dead)) {
        await this.repo.recordUnapplied(tx, change.entity, change.entity_id, change, change.fields);
        return;
      }
      await ctx.conflict('edit_after_delete', { entity: change.entity, entity_id: change.entity_id, writer: change.writer, hlc: change.hlc, fields: change.fields, deleted_by: dead.writer, deleted_hlc: dead.hlc });
      return;
    }
    const org = await this.repo.orgOf(tx, change.entity, spec.table, change.entity_id);
    if (org === undefined) await this.insert(tx, change, ctx);
    else if (org === ctx.orgId) await this.update(tx, change, ctx);
    // else: the id belongs to another organization here; a site cannot touch it.
  }

  private async remove(tx: Executor, change: SyncChangeT, ctx: ApplyContext): Promise<void> {
    const spec = ENTITY_TABLES[change.entity];
    const org = await this.repo.orgOf(tx, change.entity, spec.table, change.entity_id);
    if (org !== undefined && org !== ctx.orgId) return;
    if (org !== undefined) {
      await this.logLaterEdits(tx, change, ctx);
      // A node's rules go with it: rules created or edited after its delete are lost edits too.
      if (change.entity === 'node') {
        for (const ruleId of await this.repo.ruleIdsOf(tx, change.entity_id)) await this.logLaterEdits(tx, { ...change, entity: 'rule', entity_id: ruleId }, ctx);
      }
    }
    await this.repo.addTombstone(tx, change.entity, change.entity_id, change);
    await this.as(tx, change, async () => {
      if (change.entity === 'node' && typeof change.fields.slug === 'string') {
        // The origin's deletion time when the change carries it (since 058), so tombstones agree everywhere.
        const at = typeof change.fields.deleted_at === 'string' ? change.fields.deleted_at : ctx.now;
        await this.repo.tombstoneSlug(tx, change.fields.slug, ctx.orgId, change.entity_id, at);
      }
      if (org !== undefined) await this.repo.deleteRow(tx, spec.table, change.entity_id);
    });
    if (org !== undefined) await ctx.applied?.(change, 'deleted');
  }

  /**
   * A delete arriving after edits that were made after it (by HLC): the edits lose all the same
   * (delete is final) and are logged, as they would have been had they arrived after the delete.
   */
  private async logLaterEdits(tx: Executor, change: SyncChangeT, ctx: ApplyContext, upTo?: Version): Promise<void> {
    for (const e of await this.repo.editsAfter(tx, change.entity, change.entity_id, change)) {
      if (upTo && newer(e, upTo)) break; // logged already, against the later delete
      await ctx.conflict('edit_after_delete', { entity: change.entity, entity_id: change.entity_id, writer: e.writer, hlc: e.hlc, fields: e.fields, deleted_by: change.writer, deleted_hlc: change.hlc });
    }
  }

  /**
   * A delete older than the one this side already applied (two sides deleted the entity offline):
   * the earliest delete is the delete. Its tombstone moves back (a node's rules' and slug's too),
   * the edits made between the two deletes are logged as lost, and the delete goes on into this
   * side's feed, so every instance ends with the same tombstones.
   */
  private async antedate(tx: Executor, change: SyncChangeT, dead: Version, ctx: ApplyContext): Promise<void> {
    await this.logLaterEdits(tx, change, ctx, dead);
    await this.repo.moveTombstone(tx, change.entity, change.entity_id, change);
    if (change.entity === 'node') {
      for (const rule of await this.repo.ruleTombstonesOf(tx, change.entity_id)) {
        if (!newer(rule, change)) continue; // deleted on its own before the node
        await this.logLaterEdits(tx, { ...change, entity: 'rule', entity_id: rule.id }, ctx, rule);
        await this.repo.moveTombstone(tx, 'rule', rule.id, change);
      }
    }
    await this.as(tx, change, async () => {
      if (change.entity === 'node' && typeof change.fields.slug === 'string' && typeof change.fields.deleted_at === 'string') {
        await this.repo.tombstoneSlug(tx, change.fields.slug, ctx.orgId, change.entity_id, change.fields.deleted_at);
      }
      await this.repo.appendDelete(tx, ctx.orgId, change.entity, change.entity_id, change.fields);
    });
  }

  private async insert(tx: Executor, change: SyncChangeT, ctx: ApplyContext): Promise<void> {
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
        const refused = (await ctx.checkSlug?.(slug)) ?? null;
        if (refused) {
          await ctx.conflict(refused, { entity_id: change.entity_id, slug, writer: change.writer, hlc: change.hlc, fields: change.fields });
          return;
        }
        const holder = await this.repo.slugHolder(tx, slug);
        if (holder !== undefined && holder !== change.entity_id) {
          await ctx.conflict('slug_duplicate', { entity_id: change.entity_id, slug, holder, writer: change.writer, hlc: change.hlc, fields: change.fields });
          return;
        }
        const serialHolder = f.serial === null ? undefined : await this.repo.serialHolder(tx, ctx.orgId, f.serial!, change.entity_id);
        if (serialHolder !== undefined) {
          // Serials are printed labels, never refused: both nodes keep theirs (migration 055 made
          // serials non-unique for this).
          await ctx.conflict('serial_clash', { entity_id: change.entity_id, serial: f.serial, holder: serialHolder, writer: change.writer, hlc: change.hlc });
        }
        if (f.template_id !== null && !(await this.repo.templateExists(tx, f.template_id!))) f.template_id = null;
        if (f.batch_id !== null && !(await this.repo.batchExists(tx, f.batch_id!))) f.batch_id = null;
        if (holder === undefined) slugToInsert = slug;
        break;
      }
      case 'rule':
        if ((await this.repo.nodeOrg(tx, String(f.node_id))) !== ctx.orgId) {
          // A rule of a deleted node: dead too (so its later edits are logged like any edit of a
          // deleted entity), and logged itself when it was made after the delete.
          const nodeDead = await this.repo.tombstone(tx, 'node', String(f.node_id));
          if (nodeDead) {
            await this.repo.addTombstone(tx, 'rule', change.entity_id, nodeDead, String(f.node_id));
            if (newer(change, nodeDead)) {
              await ctx.conflict('edit_after_delete', { entity: 'rule', entity_id: change.entity_id, node_id: f.node_id, writer: change.writer, hlc: change.hlc, fields: change.fields, deleted_by: nodeDead.writer, deleted_hlc: nodeDead.hlc });
            } else {
              await this.repo.recordUnapplied(tx, 'rule', change.entity_id, change, change.fields);
            }
          }
          return;
        }
        delete extra.org_id;
        break;
      case 'batch':
        if (f.template_id !== null && !(await this.repo.templateExists(tx, f.template_id!))) f.template_id = null;
        // Batches travel once generated: they arrive ready, their nodes with them.
        Object.assign(extra, { status: 'ready', nodes_generated: f.quantity!, updated_at: f.created_at! });
        break;
      case 'webhook':
        // Only events after its arrival here are delivered (from this instance's own outbox).
        extra.start_seq = await this.repo.maxEventSeq(tx);
        break;
      default:
    }
    const row: Record<string, Value> = { id: change.entity_id, ...Object.fromEntries(spec.cols.map((c) => [c, f[c]!])), ...extra };
    await this.as(tx, change, async () => {
      const minted = typeof change.fields.minted_at === 'string' ? change.fields.minted_at : String(f.created_at);
      if (slugToInsert) await this.repo.insertSlug(tx, slugToInsert, ctx.orgId, change.entity_id, minted);
      await this.repo.insertRow(tx, spec.table, row);
    });
    await this.repo.setVersions(tx, change.entity, change.entity_id, spec.cols, change);
    await ctx.applied?.(change, 'created');
  }

  private async update(tx: Executor, change: SyncChangeT, ctx: ApplyContext): Promise<void> {
    const spec = ENTITY_TABLES[change.entity];
    const won: string[] = [];
    const versions = await this.repo.versions(tx, change.entity, change.entity_id);
    for (const [field, value] of Object.entries(change.fields)) {
      if (!(spec.cols as readonly string[]).includes(field) || field === 'slug' || field === 'created_at') continue;
      if (value === undefined) continue;
      const v = versions.get(field);
      if (v && !newer(change, v)) continue;
      won.push(field);
    }
    if (won.length === 0) {
      await this.repo.recordUnapplied(tx, change.entity, change.entity_id, change, change.fields);
      return;
    }
    const set: Record<string, Value> = {};
    for (const field of won) {
      const v = change.fields[field] ?? null;
      // A reference to something this side does not have is cleared (as its deletion would).
      if (v !== null && field === 'template_id' && !(await this.repo.templateExists(tx, v))) set[field] = null;
      else if (v !== null && field === 'batch_id' && !(await this.repo.batchExists(tx, v))) set[field] = null;
      else set[field] = v;
    }
    await this.as(tx, change, () => this.repo.updateRow(tx, spec.table, change.entity_id, set));
    await this.repo.setVersions(tx, change.entity, change.entity_id, won, change);
    await ctx.applied?.(change, 'updated');
  }

  /** Runs writes recorded under the change's own writer and HLC (and, on a site, as pulled). */
  private as(tx: Executor, change: SyncChangeT, fn: () => Promise<void>): Promise<void> {
    return this.capture.applying(tx, { writer: change.writer, hlc: change.hlc }, fn);
  }
}

/**
 * An organization's settings row is keyed by the organization's id, which is not the same on a
 * site and on its remote: the change lands on the settings of the organization it is applied to
 * (versions too, so last-writer-wins compares the same row's fields on each side).
 */
function settingsOfLocalOrg(change: SyncChangeT, orgId: string): SyncChangeT {
  return change.entity === 'organization' ? { ...change, entity_id: orgId } : change;
}

/** A constraint the row breaks (SQLite SQLITE_CONSTRAINT_*, PostgreSQL class 23). */
function isConstraintError(err: unknown): err is Error {
  if (!(err instanceof Error && 'code' in err)) return false;
  const code = String(err.code);
  return code.startsWith('SQLITE_CONSTRAINT') || /^23\d{3}$/.test(code);
}

function stringOrUndefined(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
