import type { Database } from 'better-sqlite3';
import type { Clock } from '../../platform/clock.ts';
import { ValidationError, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { mergePatch } from '../../platform/mergePatch.ts';
import type { Outbox } from '../../platform/outbox.ts';
import type { FunctionType, NodeStatus } from '../../schemas/common.ts';
import type { NodeT } from '../../schemas/nodes.ts';
import type { SlugAllocator } from '../slugs/allocator.ts';
import { normalizeSlug } from '../slugs/crockford.ts';
import type { TemplatesRepo } from '../templates/repo.ts';
import { applyTemplate, assertNoLockedOverride, assertTemplateFits, validatePayload } from './payload.ts';
import type { NodeFilter, NodeRow, NodesRepo } from './repo.ts';

export interface CreateNodeInput {
  label: string;
  function_type: FunctionType;
  payload: Record<string, unknown>;
  template_id?: string | undefined;
  status?: 'active' | 'draft' | undefined;
}

export interface UpdateNodeInput {
  label?: string | undefined;
  function_type?: FunctionType | undefined;
  payload?: Record<string, unknown> | undefined;
  status?: 'active' | 'paused' | 'retired' | undefined;
}

export interface NodeServiceDeps {
  db: Database;
  clock: Clock;
  outbox: Outbox;
  nodes: NodesRepo;
  templates: TemplatesRepo;
  slugs: SlugAllocator;
  /** `{scan_base}/v/<slug>` */
  scanUrl: (slug: string) => string;
}

export class NodeService {
  private readonly deps: NodeServiceDeps;

  constructor(deps: NodeServiceDeps) {
    this.deps = deps;
  }

  /** The node as the API shows it. */
  toApi(node: NodeRow): NodeT {
    return {
      id: node.id,
      slug: node.slug,
      label: node.label,
      url: this.deps.scanUrl(node.slug),
      function_type: node.function_type,
      payload: node.payload,
      status: node.status,
      hardware_id: node.hardware_id,
      scan_count: node.scan_count,
      template_id: node.template_id,
      batch_id: node.batch_id,
      serial: node.serial,
      created_at: node.created_at,
      updated_at: node.updated_at,
    };
  }

  create(orgId: string, input: CreateNodeInput): NodeRow {
    const { db, outbox } = this.deps;
    return db.transaction(() => {
      let payload = input.payload;
      let templateId: string | null = null;
      if (input.template_id !== undefined) {
        const template = this.deps.templates.get(orgId, input.template_id);
        if (!template) throw new ValidationError({ template_id: 'Template not found' });
        assertTemplateFits(template, input.function_type);
        assertNoLockedOverride(template, payload);
        payload = applyTemplate(template, payload);
        templateId = template.id;
      }
      validatePayload(input.function_type, payload);
      const node = this.newNode(orgId, {
        label: input.label,
        function_type: input.function_type,
        payload,
        status: input.status ?? 'active',
        template_id: templateId,
      });
      outbox.record(orgId, 'node.created', this.toApi(node));
      return node;
    })();
  }

  /**
   * Mints a slug and inserts a node. Call inside a transaction (create, batch generation).
   */
  newNode(
    orgId: string,
    fields: Pick<NodeRow, 'label' | 'function_type' | 'payload' | 'status' | 'template_id'> &
      Partial<Pick<NodeRow, 'batch_id' | 'serial' | 'serial_number'>>,
  ): NodeRow {
    const now = this.now();
    const id = newId();
    const node: NodeRow = {
      id,
      org_id: orgId,
      slug: this.deps.slugs.mint(orgId, id),
      hardware_id: null,
      scan_count: 0,
      batch_id: null,
      serial: null,
      serial_number: null,
      created_at: now,
      updated_at: now,
      ...fields,
    };
    this.deps.nodes.insert(node);
    return node;
  }

  get(orgId: string, slugInput: string): NodeRow {
    const slug = normalizeSlug(slugInput);
    const node = slug ? this.deps.nodes.getBySlug(orgId, slug) : undefined;
    if (!node) throw notFound.node();
    return node;
  }

  list(orgId: string, filter: NodeFilter): { rows: NodeRow[]; total: number } {
    return this.deps.nodes.list(orgId, filter);
  }

  update(orgId: string, slugInput: string, input: UpdateNodeInput): NodeRow {
    const { db, outbox } = this.deps;
    return db.transaction(() => {
      const node = this.get(orgId, slugInput);
      const template = node.template_id ? this.deps.templates.get(orgId, node.template_id) : undefined;
      const next: NodeRow = { ...node };
      if (input.label !== undefined) next.label = input.label;
      if (input.status !== undefined) next.status = input.status;

      if (input.function_type !== undefined && input.function_type !== node.function_type) {
        if (template) throw new ValidationError({ function_type: 'Locked by template' }, 'Locked by template');
        // A new type replaces the payload, which must then be complete for that type.
        next.function_type = input.function_type;
        next.payload = validatePayload(input.function_type, mergePatch({}, input.payload ?? {}));
      } else if (input.payload !== undefined) {
        if (template) assertNoLockedOverride(template, input.payload);
        next.payload = validatePayload(node.function_type, mergePatch(node.payload, input.payload));
      }
      next.updated_at = this.now();
      this.deps.nodes.update(next);
      outbox.record(orgId, 'node.updated', this.toApi(next));
      return next;
    })();
  }

  /** Sets a status outside PATCH's allowed values (lost, or active after a tag is verified). */
  setStatus(orgId: string, slugInput: string, status: NodeStatus): NodeRow {
    return this.deps.db.transaction(() => {
      const node = this.get(orgId, slugInput);
      const next: NodeRow = { ...node, status, updated_at: this.now() };
      this.deps.nodes.update(next);
      this.deps.outbox.record(orgId, 'node.updated', this.toApi(next));
      return next;
    })();
  }

  remove(orgId: string, slugInput: string): NodeRow {
    const { db, outbox } = this.deps;
    return db.transaction(() => {
      const node = this.get(orgId, slugInput);
      this.deps.nodes.delete(node, this.now());
      outbox.record(orgId, 'node.deleted', { id: node.id, slug: node.slug, deleted_at: this.now() });
      return node;
    })();
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}
