import type { Executor } from '../../db/store.ts';
import type { SyncChangeT } from '../../schemas/sync.ts';
import { applyTemplate, type NodeService } from '../nodes/index.ts';
import type { TemplateService } from '../templates/index.ts';

/**
 * Locked template fields win after sync (issue 15): a node bound offline to a template whose
 * locked value changed meanwhile at another instance arrives with the old value, and a template
 * change arriving by sync reaches rows that the apply path writes directly, past the template
 * service that would update bound nodes. So after applying changes (a pulled page, a push), each
 * bound node the changes touched takes its template's locked values, as a local write of this
 * instance: captured, so it travels like the template service's own updates.
 */
export class TemplateLocks {
  private readonly nodes: NodeService;
  private readonly templates: TemplateService;

  constructor(deps: { nodes: NodeService; templates: TemplateService }) {
    this.nodes = deps.nodes;
    this.templates = deps.templates;
  }

  async afterApply(tx: Executor, orgId: string, changes: readonly SyncChangeT[], at: string): Promise<void> {
    const { templateIds, nodeIds } = touched(changes);
    const seen = new Set<string>();
    for (const id of templateIds) {
      const template = await this.template(tx, orgId, id);
      if (!template) continue;
      for (const node of await this.nodes.boundToTemplate(tx, id)) {
        seen.add(node.id);
        await this.enforce(tx, node, template, at);
      }
    }
    for (const id of nodeIds) {
      if (seen.has(id)) continue;
      const node = await this.nodes.byId(tx, id);
      if (!node || node.org_id !== orgId || !node.template_id) continue;
      const template = await this.template(tx, orgId, node.template_id);
      if (template) await this.enforce(tx, node, template, at);
    }
  }

  private async enforce(tx: Executor, node: NonNullable<Awaited<ReturnType<NodeService['byId']>>>, template: Awaited<ReturnType<TemplateService['get']>>, at: string) {
    // As the template service does when a locked value changes (templates/service.ts).
    const payload = applyTemplate(template, node.payload);
    if (JSON.stringify(payload) === JSON.stringify(node.payload)) return;
    await this.nodes.change(tx, node, { payload }, at);
  }

  private async template(tx: Executor, orgId: string, id: string) {
    try {
      return await this.templates.get(orgId, id, tx);
    } catch {
      return undefined; // deleted, or another organization's: nothing to enforce
    }
  }
}

/** Templates whose payload or locks changed, and nodes that arrived or changed payload or template. */
function touched(changes: readonly SyncChangeT[]): { templateIds: Set<string>; nodeIds: Set<string> } {
  const templateIds = new Set<string>();
  const nodeIds = new Set<string>();
  for (const c of changes) {
    if (c.op !== 'upsert') continue;
    if (c.entity === 'template' && ('payload_json' in c.fields || 'locked_fields_json' in c.fields)) templateIds.add(c.entity_id);
    if (c.entity === 'node' && ('payload_json' in c.fields || 'template_id' in c.fields)) nodeIds.add(c.entity_id);
  }
  return { templateIds, nodeIds };
}
