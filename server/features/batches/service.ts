import type { Executor, Store } from '../../db/store.ts';
import type { Clock } from '../../platform/clock.ts';
import { ConflictError, ValidationError, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { Outbox } from '../../platform/outbox.ts';
import type { BatchStatus, FunctionType } from '../../schemas/common.ts';
import type { BatchT } from '../../schemas/batches.ts';
import type { TagProtection } from '../../schemas/nfc.ts';
import type { SyncChangeT } from '../../schemas/sync.ts';
import { applyTemplate, assertNoLockedOverride, assertTemplateFits, type NodeService, scanUrl, type TemplateLookup, validatePayload } from '../nodes/index.ts';
import type { BatchLease, BatchRow, BatchesRepo } from './repo.ts';
import { formatSerial } from './serial.ts';

export interface CreateBatchInput {
  label: string;
  prefix: string;
  quantity: number;
  function_type: FunctionType;
  base_payload?: Record<string, unknown> | undefined;
  template_id?: string | undefined;
}

export interface BatchServiceDeps {
  store: Store;
  clock: Clock;
  outbox: Pick<Outbox, 'record'>;
  batches: BatchesRepo;
  templates: TemplateLookup;
  /** Batch nodes are made and changed through the nodes feature. */
  nodes: NodeService;
  /** `{base_url}` used in manifest_url of events (API replies use the request's origin). */
  apiBase: string;
  /** What protects each written tag, by node id (the NFC feature's write log); absent: nothing known. */
  tagProtection?: (db: Executor, nodes: Array<{ id: string; hardware_id: string | null }>) => Promise<Map<string, TagProtection>>;
  /** Throws (409) when the slug source cannot cover `count` new nodes (a paired site's reserve). */
  assertCanMint?: (count: number, db: Executor) => void | Promise<void>;
  /**
   * A paired site's serials come from its remote while it is online (docs/sync.md, "Batch
   * serials"): the first of `quantity` numbers, or who numbers here instead.
   */
  serialsFromRemote?: (orgId: string, prefix: string, quantity: number) => Promise<RemoteSerials>;
}

/**
 * The remote's first serial; `local`: this instance numbers its own (standalone, or not the
 * organization it syncs); `offline`: a paired site that could not reach its remote numbers them
 * here, provisionally (they may repeat another offline site's).
 */
export type RemoteSerials = number | 'local' | 'offline';

/** The generator's hold on a batch while it makes a chunk (generator.ts). */
export interface GenerationLease {
  owner: string;
  /** How long the lease lasts after each chunk commits. */
  ms: number;
}

export const MANIFEST_READY: readonly BatchStatus[] = ['ready', 'writing', 'deployed'];

export interface ManifestRow {
  serial: string;
  slug: string;
  url: string;
  id: string;
  status: string;
  hardware_id: string | null;
  tag_protection: TagProtection | null;
}

const NO_LEASE: BatchLease = { lease_owner: null, lease_until: null };

export class BatchService {
  private readonly deps: BatchServiceDeps;

  constructor(deps: BatchServiceDeps) {
    this.deps = deps;
  }

  async toApi(batch: BatchRow, apiBase = this.deps.apiBase, db: Executor = this.deps.store.db): Promise<BatchT> {
    return {
      id: batch.id,
      label: batch.label,
      prefix: batch.prefix,
      quantity: batch.quantity,
      function_type: batch.function_type,
      status: batch.status,
      manifest_url: MANIFEST_READY.includes(batch.status) ? `${apiBase}/batches/${batch.id}/manifest` : null,
      template_id: batch.template_id,
      failure_reason: batch.failure_reason,
      serials_provisional: batch.serials_provisional,
      nodes_generated: batch.nodes_generated,
      nodes_written: await this.deps.nodes.writtenInBatch(db, batch.id),
      created_at: batch.created_at,
      updated_at: batch.updated_at,
    };
  }

  /** Records the batch and reserves its serials; nodes are made by the generator. */
  async create(orgId: string, input: CreateBatchInput): Promise<BatchRow> {
    const { store, batches, templates } = this.deps;
    // Asked before the transaction: no network call inside one.
    const fromRemote = (await this.deps.serialsFromRemote?.(orgId, input.prefix, input.quantity)) ?? 'local';
    const granted = typeof fromRemote === 'number' ? fromRemote : null;
    return store.transaction(async (tx) => {
      if (input.template_id !== undefined) {
        const template = await templates.get(tx, orgId, input.template_id);
        if (!template) throw new ValidationError({ template_id: 'Template not found' });
        assertTemplateFits(template, input.function_type);
        if (input.base_payload) assertNoLockedOverride(template, input.base_payload, 'base_payload');
        const merged = applyTemplate(template, input.base_payload ?? {});
        if (input.base_payload) validatePayload(input.function_type, merged, 'base_payload');
      } else if (input.base_payload !== undefined) {
        validatePayload(input.function_type, input.base_payload, 'base_payload');
      }
      await this.deps.assertCanMint?.(input.quantity, tx);
      const now = this.now();
      const batch: BatchRow = {
        id: newId(),
        org_id: orgId,
        label: input.label,
        prefix: input.prefix,
        quantity: input.quantity,
        serial_start: granted ?? (await batches.reserveSerials(tx, orgId, input.prefix, input.quantity)),
        serials_provisional: fromRemote === 'offline',
        function_type: input.function_type,
        base_payload: input.base_payload ?? null,
        template_id: input.template_id ?? null,
        status: 'generating',
        failure_reason: null,
        nodes_generated: 0,
        created_at: now,
        updated_at: now,
      };
      if (granted !== null) await batches.raiseSerials(tx, orgId, input.prefix, granted + input.quantity);
      await batches.insert(tx, batch);
      return batch;
    });
  }

  async get(orgId: string, id: string, db: Executor = this.deps.store.db): Promise<BatchRow> {
    const batch = await this.deps.batches.get(db, orgId, id);
    if (!batch) throw notFound.batch();
    return batch;
  }

  /**
   * A batch from an organization's export (waymark import), as it was (its nodes follow through
   * the nodes feature). Numbering of its prefix goes on after its serials.
   */
  async restoreIn(tx: Executor, batch: BatchRow): Promise<void> {
    if (batch.template_id !== null) {
      const template = await this.deps.templates.get(tx, batch.org_id, batch.template_id);
      if (!template) throw new ValidationError({ template_id: 'Template not found' });
      assertTemplateFits(template, batch.function_type);
    }
    await this.deps.batches.insert(tx, batch);
    await this.deps.batches.raiseSerials(tx, batch.org_id, batch.prefix, batch.serial_start + batch.quantity);
  }

  /** Every batch of an organization (the export). */
  async all(orgId: string, db: Executor = this.deps.store.db): Promise<BatchRow[]> {
    const out: BatchRow[] = [];
    for (;;) {
      const { rows } = await this.deps.batches.list(db, orgId, undefined, 500, out.length);
      out.push(...rows);
      if (rows.length < 500) return out;
    }
  }

  list(orgId: string, status: BatchStatus | undefined, limit: number, offset: number) {
    return this.deps.batches.list(this.deps.store.db, orgId, status, limit, offset);
  }

  /**
   * Makes up to `max` more nodes of a generating batch in one transaction, together with the
   * progress counter: a crash between chunks resumes exactly where the last commit left off.
   * The batch row stays locked for the chunk (PostgreSQL), so chunks of one batch never run at
   * once; with a `lease`, a batch another process has taken over is left to it, and the lease
   * is renewed with the chunk. Returns true when this caller has no more work on the batch.
   */
  generateChunk(batchId: string, max = 100, lease?: GenerationLease): Promise<boolean> {
    const { store, batches, templates, nodes, outbox } = this.deps;
    return store.transaction(async (tx) => {
      const batch = await batches.lockForGeneration(tx, batchId);
      if (!batch || batch.status !== 'generating') return true;
      if (lease && batch.lease_owner !== lease.owner) return true;
      const template = batch.template_id ? await templates.get(tx, batch.org_id, batch.template_id) : undefined;
      const payload = template ? applyTemplate(template, batch.base_payload ?? {}) : (batch.base_payload ?? {});
      const end = Math.min(batch.quantity, batch.nodes_generated + max);
      for (let i = batch.nodes_generated; i < end; i++) {
        const number = batch.serial_start + i;
        const serial = formatSerial(batch.prefix, number);
        await nodes.newNode(tx, batch.org_id, {
          label: serial,
          function_type: batch.function_type,
          payload,
          status: 'in_production',
          template_id: template?.id ?? null,
          batch_id: batch.id,
          serial,
          serial_number: number,
        });
      }
      const now = this.deps.clock.now();
      const { lease_owner: _owner, lease_until: _until, ...row } = batch;
      const next: BatchRow = { ...row, nodes_generated: end, updated_at: new Date(now).toISOString() };
      if (end >= batch.quantity) next.status = 'ready';
      const renewed: BatchLease | undefined =
        next.status !== 'generating' ? NO_LEASE : lease ? { lease_owner: lease.owner, lease_until: new Date(now + lease.ms).toISOString() } : undefined;
      await batches.update(tx, next, renewed);
      if (next.status === 'ready') await outbox.record(tx, batch.org_id, 'batch.completed', await this.toApi(next, undefined, tx));
      return next.status !== 'generating';
    });
  }

  /**
   * Claims the next batch to generate for `lease.owner` (generator.ts): the oldest generating
   * batch no live lease holds. `othersLeases: false` when no other process can hold one (SQLite).
   */
  claimNext(lease: GenerationLease, othersLeases: boolean): Promise<string | undefined> {
    const now = this.deps.clock.now();
    return this.deps.store.transaction((tx) =>
      this.deps.batches.claimNext(tx, lease.owner, new Date(now).toISOString(), new Date(now + lease.ms).toISOString(), othersLeases),
    );
  }

  /** When another process's lease on a generating batch runs out first (ms since the epoch; null: none). */
  async nextLeaseExpiry(owner: string): Promise<number | null> {
    const until = await this.deps.batches.nextLeaseExpiry(this.deps.store.db, owner);
    return until === null ? null : Date.parse(until);
  }

  /** Marks a batch failed (generation error). */
  async fail(batchId: string, reason: string): Promise<void> {
    const { store, batches, outbox } = this.deps;
    await store.transaction(async (tx) => {
      const batch = await batches.lockForGeneration(tx, batchId);
      if (!batch || batch.status !== 'generating') return;
      const { lease_owner: _owner, lease_until: _until, ...row } = batch;
      const next: BatchRow = { ...row, status: 'failed', failure_reason: reason, updated_at: this.now() };
      await batches.update(tx, next, NO_LEASE);
      await outbox.record(tx, batch.org_id, 'batch.failed', await this.toApi(next, undefined, tx));
    });
  }

  retry(orgId: string, id: string): Promise<BatchRow> {
    return this.deps.store.transaction(async (tx) => {
      const batch = await this.get(orgId, id, tx);
      if (batch.status !== 'failed') throw new ConflictError(`Only a failed batch can be retried (status is ${batch.status})`);
      const next: BatchRow = { ...batch, status: 'generating', failure_reason: null, updated_at: this.now() };
      await this.deps.batches.update(tx, next, NO_LEASE);
      return next;
    });
  }

  /**
   * PATCH: label, and the manual moves ready → writing and ready|writing → deployed. Deploying
   * activates every node still in production.
   */
  update(orgId: string, id: string, input: { label?: string | undefined; status?: 'writing' | 'deployed' | undefined }): Promise<BatchRow> {
    return this.deps.store.transaction((tx) => this.updateIn(tx, orgId, id, input));
  }

  /** update() in the caller's transaction (NFC deploys a batch whose every tag is written). */
  async updateIn(tx: Executor, orgId: string, id: string, input: { label?: string | undefined; status?: 'writing' | 'deployed' | undefined }): Promise<BatchRow> {
    const batch = await this.get(orgId, id, tx);
    const next: BatchRow = { ...batch, updated_at: this.now() };
    if (input.label !== undefined) next.label = input.label;
    if (input.status !== undefined && input.status !== batch.status) {
      const allowed: Record<string, readonly BatchStatus[]> = { writing: ['ready'], deployed: ['ready', 'writing'] };
      if (!allowed[input.status]!.includes(batch.status)) {
        throw new ConflictError(`Cannot change batch status from ${batch.status} to ${input.status}`);
      }
      next.status = input.status;
      if (input.status === 'deployed') await this.activateNodes(tx, batch);
    }
    await this.deps.batches.update(tx, next);
    return next;
  }

  /** Called in the transaction binding a tag of the batch: ready → writing, and deployed once all are. */
  async noteTagWritten(tx: Executor, batchId: string): Promise<BatchRow | undefined> {
    const batch = await this.deps.batches.getById(tx, batchId);
    if (!batch || !['ready', 'writing'].includes(batch.status)) return batch;
    const written = await this.deps.nodes.writtenInBatch(tx, batch.id);
    const status: BatchStatus = written >= batch.quantity ? 'deployed' : 'writing';
    if (status === batch.status) return batch;
    const next: BatchRow = { ...batch, status, updated_at: this.now() };
    await this.deps.batches.update(tx, next);
    return next;
  }

  async manifest(orgId: string, id: string, db: Executor = this.deps.store.db): Promise<{ batch: BatchRow; nodes: ManifestRow[] }> {
    const batch = await this.get(orgId, id, db);
    if (!MANIFEST_READY.includes(batch.status)) {
      throw new ConflictError(`Manifest not ready: batch is ${batch.status}`);
    }
    const { rows } = await this.deps.nodes.list(orgId, { batch_id: batch.id, limit: batch.quantity, offset: 0 }, db);
    const scanBase = await this.deps.nodes.scanBaseOf(orgId, db);
    const protection = (await this.deps.tagProtection?.(db, rows)) ?? new Map<string, TagProtection>();
    return {
      batch,
      nodes: rows.map((n) => ({
        serial: n.serial ?? '',
        slug: n.slug,
        url: scanUrl(scanBase, n.slug),
        id: n.id,
        status: n.status,
        hardware_id: n.hardware_id,
        tag_protection: n.hardware_id ? (protection.get(n.id) ?? 'none') : null,
      })),
    };
  }

  /**
   * The event for a batch a site pushed (sync applies it; the remote emits the webhook events):
   * a site pushes a batch once it is complete. Runs in the push's transaction.
   */
  /** For sync: reserves serials at the remote for a site (`POST /v1/sync/serials`); returns the first. */
  reserveSerials(tx: Executor, orgId: string, prefix: string, quantity: number): Promise<number> {
    return this.deps.batches.reserveSerials(tx, orgId, prefix, quantity);
  }

  /** For sync: a batch arrived from elsewhere; numbering of its prefix continues after it. */
  serialsSeen(tx: Executor, orgId: string, prefix: string, next: number): Promise<void> {
    return this.deps.batches.raiseSerials(tx, orgId, prefix, next);
  }

  async remoteChangeApplied(tx: Executor, orgId: string, change: Pick<SyncChangeT, 'entity' | 'entity_id'>, effect: 'created' | 'updated' | 'deleted'): Promise<void> {
    if (change.entity !== 'batch' || effect !== 'created') return;
    const batch = await this.deps.batches.get(tx, orgId, change.entity_id);
    if (batch) await this.deps.outbox.record(tx, orgId, 'batch.completed', await this.toApi(batch, undefined, tx));
  }

  private async activateNodes(tx: Executor, batch: BatchRow): Promise<void> {
    const { rows } = await this.deps.nodes.list(batch.org_id, { batch_id: batch.id, status: 'in_production', limit: batch.quantity, offset: 0 }, tx);
    const now = this.now();
    for (const node of rows) await this.deps.nodes.change(tx, node, { status: 'active' }, now);
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}
