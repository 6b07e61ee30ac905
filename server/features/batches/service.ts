import type { Database } from 'better-sqlite3';
import type { Clock } from '../../platform/clock.ts';
import { ConflictError, ValidationError, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { Outbox } from '../../platform/outbox.ts';
import type { BatchStatus, FunctionType } from '../../schemas/common.ts';
import type { BatchT } from '../../schemas/batches.ts';
import type { NodesRepo } from '../nodes/repo.ts';
import type { NodeService } from '../nodes/service.ts';
import { applyTemplate, assertNoLockedOverride, assertTemplateFits, validatePayload } from '../nodes/payload.ts';
import type { TemplatesRepo } from '../templates/repo.ts';
import type { BatchRow, BatchesRepo } from './repo.ts';
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
  db: Database;
  clock: Clock;
  outbox: Outbox;
  batches: BatchesRepo;
  nodes: NodesRepo;
  templates: TemplatesRepo;
  nodeService: NodeService;
  /** `{base_url}` used in manifest_url of events (API replies use the request's origin). */
  apiBase: string;
  /** Throws (409) when the slug source cannot cover `count` new nodes (a paired site's reserve). */
  assertCanMint?: (count: number) => void;
}

export const MANIFEST_READY: readonly BatchStatus[] = ['ready', 'writing', 'deployed'];

export interface ManifestRow {
  serial: string;
  slug: string;
  url: string;
  id: string;
  status: string;
  hardware_id: string | null;
}

export class BatchService {
  private readonly deps: BatchServiceDeps;

  constructor(deps: BatchServiceDeps) {
    this.deps = deps;
  }

  toApi(batch: BatchRow, apiBase = this.deps.apiBase): BatchT {
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
      nodes_generated: batch.nodes_generated,
      nodes_written: this.deps.batches.nodesWritten(batch.id),
      created_at: batch.created_at,
      updated_at: batch.updated_at,
    };
  }

  /** Records the batch and reserves its serials; nodes are made by the generator. */
  create(orgId: string, input: CreateBatchInput): BatchRow {
    const { db, batches, templates } = this.deps;
    return db.transaction(() => {
      if (input.template_id !== undefined) {
        const template = templates.get(orgId, input.template_id);
        if (!template) throw new ValidationError({ template_id: 'Template not found' });
        assertTemplateFits(template, input.function_type);
        if (input.base_payload) assertNoLockedOverride(template, input.base_payload, 'base_payload');
        const merged = applyTemplate(template, input.base_payload ?? {});
        if (input.base_payload) validatePayload(input.function_type, merged, 'base_payload');
      } else if (input.base_payload !== undefined) {
        validatePayload(input.function_type, input.base_payload, 'base_payload');
      }
      this.deps.assertCanMint?.(input.quantity);
      const now = new Date(this.deps.clock.now()).toISOString();
      const batch: BatchRow = {
        id: newId(),
        org_id: orgId,
        label: input.label,
        prefix: input.prefix,
        quantity: input.quantity,
        serial_start: batches.reserveSerials(orgId, input.prefix, input.quantity),
        function_type: input.function_type,
        base_payload: input.base_payload ?? null,
        template_id: input.template_id ?? null,
        status: 'generating',
        failure_reason: null,
        nodes_generated: 0,
        created_at: now,
        updated_at: now,
      };
      batches.insert(batch);
      return batch;
    })();
  }

  get(orgId: string, id: string): BatchRow {
    const batch = this.deps.batches.get(orgId, id);
    if (!batch) throw notFound.batch();
    return batch;
  }

  list(orgId: string, status: BatchStatus | undefined, limit: number, offset: number) {
    return this.deps.batches.list(orgId, status, limit, offset);
  }

  /**
   * Makes up to `max` more nodes of a generating batch in one transaction, together with the
   * progress counter: a crash between chunks resumes exactly where the last commit left off.
   * Returns true when the batch needs no more work.
   */
  generateChunk(batchId: string, max = 100): boolean {
    const { db, batches, templates, nodeService, outbox } = this.deps;
    return db.transaction(() => {
      const batch = batches.getById(batchId);
      if (!batch || batch.status !== 'generating') return true;
      const template = batch.template_id ? templates.get(batch.org_id, batch.template_id) : undefined;
      const payload = template ? applyTemplate(template, batch.base_payload ?? {}) : (batch.base_payload ?? {});
      const end = Math.min(batch.quantity, batch.nodes_generated + max);
      for (let i = batch.nodes_generated; i < end; i++) {
        const number = batch.serial_start + i;
        const serial = formatSerial(batch.prefix, number);
        nodeService.newNode(batch.org_id, {
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
      const next: BatchRow = { ...batch, nodes_generated: end, updated_at: new Date(this.deps.clock.now()).toISOString() };
      if (end >= batch.quantity) next.status = 'ready';
      batches.update(next);
      if (next.status === 'ready') outbox.record(batch.org_id, 'batch.completed', this.toApi(next));
      return next.status !== 'generating';
    })();
  }

  /** Marks a batch failed (generation error). */
  fail(batchId: string, reason: string): void {
    const { db, batches, outbox } = this.deps;
    db.transaction(() => {
      const batch = batches.getById(batchId);
      if (!batch || batch.status !== 'generating') return;
      const next: BatchRow = { ...batch, status: 'failed', failure_reason: reason, updated_at: new Date(this.deps.clock.now()).toISOString() };
      batches.update(next);
      outbox.record(batch.org_id, 'batch.failed', this.toApi(next));
    })();
  }

  retry(orgId: string, id: string): BatchRow {
    return this.deps.db.transaction(() => {
      const batch = this.get(orgId, id);
      if (batch.status !== 'failed') throw new ConflictError(`Only a failed batch can be retried (status is ${batch.status})`);
      const next: BatchRow = { ...batch, status: 'generating', failure_reason: null, updated_at: new Date(this.deps.clock.now()).toISOString() };
      this.deps.batches.update(next);
      return next;
    })();
  }

  /**
   * PATCH: label, and the manual moves ready → writing and ready|writing → deployed. Deploying
   * activates every node still in production.
   */
  update(orgId: string, id: string, input: { label?: string | undefined; status?: 'writing' | 'deployed' | undefined }): BatchRow {
    return this.deps.db.transaction(() => {
      const batch = this.get(orgId, id);
      const next: BatchRow = { ...batch, updated_at: new Date(this.deps.clock.now()).toISOString() };
      if (input.label !== undefined) next.label = input.label;
      if (input.status !== undefined && input.status !== batch.status) {
        const allowed: Record<string, readonly BatchStatus[]> = { writing: ['ready'], deployed: ['ready', 'writing'] };
        if (!allowed[input.status]!.includes(batch.status)) {
          throw new ConflictError(`Cannot change batch status from ${batch.status} to ${input.status}`);
        }
        next.status = input.status;
        if (input.status === 'deployed') this.activateNodes(batch);
      }
      this.deps.batches.update(next);
      return next;
    })();
  }

  /** Called when a tag of the batch was written: ready → writing, and deployed once all are. */
  noteTagWritten(batchId: string): BatchRow | undefined {
    return this.deps.db.transaction(() => {
      const batch = this.deps.batches.getById(batchId);
      if (!batch || !['ready', 'writing'].includes(batch.status)) return batch;
      const written = this.deps.batches.nodesWritten(batch.id);
      const status: BatchStatus = written >= batch.quantity ? 'deployed' : 'writing';
      if (status === batch.status) return batch;
      const next: BatchRow = { ...batch, status, updated_at: new Date(this.deps.clock.now()).toISOString() };
      this.deps.batches.update(next);
      return next;
    })();
  }

  manifest(orgId: string, id: string): { batch: BatchRow; nodes: ManifestRow[] } {
    const batch = this.get(orgId, id);
    if (!MANIFEST_READY.includes(batch.status)) {
      throw new ConflictError(`Manifest not ready: batch is ${batch.status}`);
    }
    const { rows } = this.deps.nodes.list(orgId, { batch_id: batch.id, limit: batch.quantity, offset: 0 });
    return {
      batch,
      nodes: rows.map((n) => ({
        serial: n.serial ?? '',
        slug: n.slug,
        url: this.deps.nodeService.toApi(n).url,
        id: n.id,
        status: n.status,
        hardware_id: n.hardware_id,
      })),
    };
  }

  private activateNodes(batch: BatchRow): void {
    const { rows } = this.deps.nodes.list(batch.org_id, { batch_id: batch.id, status: 'in_production', limit: batch.quantity, offset: 0 });
    const now = new Date(this.deps.clock.now()).toISOString();
    for (const node of rows) {
      const next = { ...node, status: 'active' as const, updated_at: now };
      this.deps.nodes.update(next);
      this.deps.outbox.record(batch.org_id, 'node.updated', this.deps.nodeService.toApi(next));
    }
  }
}
