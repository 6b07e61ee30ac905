import type { Executor, Store } from '../../db/store.ts';
import type { Clock } from '../../platform/clock.ts';
import { ValidationError, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { mergePatch } from '../../platform/mergePatch.ts';
import type { FunctionType } from '../../schemas/common.ts';
import { payloadFields } from '../../schemas/payloads.ts';
import type { TemplateT } from '../../schemas/templates.ts';
import { applyTemplate, isConfigured, type NodeService, validatePartialPayload, validatePayload } from '../nodes/index.ts';
import type { TemplateRow, TemplatesRepo } from './repo.ts';

export interface TemplateServiceDeps {
  store: Store;
  clock: Clock;
  templates: TemplatesRepo;
  /** Bound nodes take a template's new locked values through the nodes feature. */
  nodes: NodeService;
}

function validateLockedFields(type: FunctionType, fields: string[]): void {
  const known = payloadFields[type];
  const details: Record<string, string> = {};
  fields.forEach((f, i) => {
    if (!known.includes(f)) details[`locked_fields.${i}`] = `must be a ${type} payload field: ${known.join(', ')}`;
  });
  if (Object.keys(details).length > 0) throw new ValidationError(details);
}

export class TemplateService {
  private readonly deps: TemplateServiceDeps;

  constructor(deps: TemplateServiceDeps) {
    this.deps = deps;
  }

  toApi(t: TemplateRow): TemplateT {
    const { org_id: _org, ...rest } = t;
    return rest;
  }

  async create(orgId: string, input: { name: string; function_type: FunctionType; payload: Record<string, unknown>; locked_fields?: string[] | undefined }): Promise<TemplateRow> {
    validatePartialPayload(input.function_type, input.payload);
    const locked = [...new Set(input.locked_fields ?? [])];
    validateLockedFields(input.function_type, locked);
    const now = new Date(this.deps.clock.now()).toISOString();
    const template: TemplateRow = {
      id: newId(),
      org_id: orgId,
      name: input.name,
      function_type: input.function_type,
      payload: input.payload,
      locked_fields: locked,
      created_at: now,
      updated_at: now,
    };
    await this.deps.templates.insert(this.deps.store.db, template);
    return template;
  }

  /** A template from an organization's export (waymark import), as it was; checked like a create. */
  async restoreIn(tx: Executor, template: TemplateRow): Promise<void> {
    validatePartialPayload(template.function_type, template.payload);
    validateLockedFields(template.function_type, template.locked_fields);
    await this.deps.templates.insert(tx, template);
  }

  /** Every template of an organization, oldest first (the export). */
  async all(orgId: string, db: Executor = this.deps.store.db): Promise<TemplateRow[]> {
    const out: TemplateRow[] = [];
    for (;;) {
      const { rows } = await this.deps.templates.list(db, orgId, 500, out.length);
      out.push(...rows);
      if (rows.length < 500) return out;
    }
  }

  async get(orgId: string, id: string, db: Executor = this.deps.store.db): Promise<TemplateRow> {
    const t = await this.deps.templates.get(db, orgId, id);
    if (!t) throw notFound.template();
    return t;
  }

  list(orgId: string, limit: number, offset: number) {
    return this.deps.templates.list(this.deps.store.db, orgId, limit, offset);
  }

  /**
   * Updates a template. When a locked field's value changes, every bound node takes the new
   * value in the same transaction (and must stay valid, else nothing changes).
   */
  update(orgId: string, id: string, input: { name?: string | undefined; payload?: Record<string, unknown> | undefined; locked_fields?: string[] | undefined }): Promise<TemplateRow> {
    const { store, nodes } = this.deps;
    return store.transaction(async (tx) => {
      const current = await this.get(orgId, id, tx);
      const next: TemplateRow = { ...current, updated_at: new Date(this.deps.clock.now()).toISOString() };
      if (input.name !== undefined) next.name = input.name;
      if (input.payload !== undefined) {
        next.payload = mergePatch(current.payload, input.payload) as Record<string, unknown>;
        validatePartialPayload(current.function_type, next.payload);
      }
      if (input.locked_fields !== undefined) {
        next.locked_fields = [...new Set(input.locked_fields)];
        validateLockedFields(current.function_type, next.locked_fields);
      }
      await this.deps.templates.update(tx, next);

      const lockedChanged = next.locked_fields.some(
        (f) => !current.locked_fields.includes(f) || JSON.stringify(current.payload[f]) !== JSON.stringify(next.payload[f]),
      );
      if (lockedChanged) {
        for (const node of await nodes.boundToTemplate(tx, current.id)) {
          const payload = applyTemplate(next, node.payload);
          if (JSON.stringify(payload) === JSON.stringify(node.payload)) continue;
          // Batch nodes may still be unconfigured (DESIGN: without base_payload they start so);
          // they take the new value and stay unconfigured. Only a complete node must stay valid.
          if (isConfigured(node.function_type, node.payload)) {
            try {
              validatePayload(node.function_type, payload);
            } catch (err) {
              if (err instanceof ValidationError) {
                throw new ValidationError({ payload: `would make bound node ${node.slug} invalid: ${Object.entries(err.details ?? {}).map(([k, v]) => `${k} ${v}`).join('; ')}` });
              }
              throw err;
            }
          }
          await nodes.change(tx, node, { payload }, next.updated_at);
        }
      }
      return next;
    });
  }

  async remove(orgId: string, id: string): Promise<void> {
    await this.deps.store.transaction(async (tx) => {
      await this.get(orgId, id, tx);
      await this.deps.templates.delete(tx, id);
    });
  }
}
