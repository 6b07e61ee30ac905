import type { Executor, Store } from '../../db/store.ts';
import type { Clock } from '../../platform/clock.ts';
import { ConflictError, ValidationError, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { parseOrThrow } from '../../platform/validation.ts';
import type { FunctionType } from '../../schemas/common.ts';
import type { RuleT, RuleType } from '../../schemas/rules.ts';
import { ruleTypes } from '../../ruleTypes/registry.ts';
import type { RuleTypeDef } from '../../ruleTypes/define.ts';
import { type NodeRow, type NodeService, validatePayload } from '../nodes/index.ts';
import type { RuleRow, RulesRepo } from './repo.ts';

export interface RuleInput {
  rule_type: RuleType;
  conditions: Record<string, unknown>;
  function_type: FunctionType;
  payload: Record<string, unknown>;
  priority?: number | undefined;
  enabled?: boolean | undefined;
}

export interface RuleServiceDeps {
  store: Store;
  clock: Clock;
  rules: RulesRepo;
  nodeService: NodeService;
  /** Told after a change to a node's rules committed (scan-path caches listen). */
  onRulesChanged?: (nodeId: string) => void;
}

export class RuleService {
  private readonly deps: RuleServiceDeps;

  constructor(deps: RuleServiceDeps) {
    this.deps = deps;
  }

  toApi(rule: RuleRow): RuleT {
    const { node_id: _node, ...rest } = rule;
    return rest;
  }

  async list(orgId: string, slug: string): Promise<RuleRow[]> {
    const db = this.deps.store.db;
    const node = await this.deps.nodeService.get(orgId, slug, db);
    return this.deps.rules.listForNode(db, node.id);
  }

  async get(orgId: string, slug: string, id: string, db: Executor = this.deps.store.db): Promise<RuleRow> {
    const node = await this.deps.nodeService.get(orgId, slug, db);
    const rule = await this.deps.rules.get(db, node.id, id);
    if (!rule) throw notFound.rule();
    return rule;
  }

  create(orgId: string, slug: string, input: RuleInput): Promise<RuleRow> {
    return this.deps.store.transaction(async (tx) => {
      const node = await this.deps.nodeService.get(orgId, slug, tx);
      const now = new Date(this.deps.clock.now()).toISOString();
      const rule: RuleRow = {
        id: newId(),
        node_id: node.id,
        rule_type: input.rule_type,
        conditions: input.conditions,
        function_type: input.function_type,
        payload: input.payload,
        priority: input.priority ?? 0,
        enabled: input.enabled ?? true,
        created_at: now,
        updated_at: now,
      };
      await this.validate(tx, rule);
      await this.deps.rules.insert(tx, rule);
      this.changed(tx, node.id);
      return rule;
    });
  }

  /** A rule from an organization's export (waymark import), as it was, on its restored node; checked like a create. */
  async restoreIn(tx: Executor, rule: RuleRow): Promise<void> {
    await this.validate(tx, rule);
    await this.deps.rules.insert(tx, rule);
    this.changed(tx, rule.node_id);
  }

  /** The rules of several nodes, by node, each in evaluation order (the export, a page of nodes at a time). */
  async ofNodes(nodeIds: readonly string[], db: Executor = this.deps.store.db): Promise<Map<string, RuleRow[]>> {
    const byNode = new Map<string, RuleRow[]>();
    for (const rule of await this.deps.rules.listForNodes(db, nodeIds)) {
      const list = byNode.get(rule.node_id);
      if (list) list.push(rule);
      else byNode.set(rule.node_id, [rule]);
    }
    return byNode;
  }

  update(orgId: string, slug: string, id: string, input: Partial<RuleInput>): Promise<RuleRow> {
    return this.deps.store.transaction(async (tx) => {
      const current = await this.get(orgId, slug, id, tx);
      const next: RuleRow = { ...current, updated_at: new Date(this.deps.clock.now()).toISOString() };
      for (const key of ['rule_type', 'conditions', 'function_type', 'payload', 'priority', 'enabled'] as const) {
        if (input[key] !== undefined) Object.assign(next, { [key]: input[key] });
      }
      await this.validate(tx, next);
      await this.deps.rules.update(tx, next);
      this.changed(tx, current.node_id);
      return next;
    });
  }

  async remove(orgId: string, slug: string, id: string): Promise<void> {
    await this.deps.store.transaction(async (tx) => {
      const rule = await this.get(orgId, slug, id, tx);
      await this.deps.rules.delete(tx, rule.id);
      this.changed(tx, rule.node_id);
    });
  }

  /** The node's split-test variants (rules whose type has `variant`), each with its share of visitors. */
  async variants(orgId: string, slug: string): Promise<Array<{ rule: RuleRow; share: number }>> {
    return (await this.list(orgId, slug)).flatMap((rule) => {
      const type: RuleTypeDef = ruleTypes[rule.rule_type];
      const conditions = type.variant ? type.parse(rule.conditions) : undefined;
      return type.variant && conditions !== undefined ? [{ rule, share: type.variant.share(conditions) }] : [];
    });
  }

  /**
   * Ends a split test with `id` as the winner: the variant's function type and payload replace the
   * node's (through the node update, so validation, template locks and its node.updated event
   * apply as for a PATCH) and the node's variant rules are all deleted, in one transaction.
   */
  promote(orgId: string, slug: string, id: string): Promise<NodeRow> {
    return this.deps.store.transaction(async (tx) => {
      const rule = await this.get(orgId, slug, id, tx);
      if (!ruleTypes[rule.rule_type].variant) {
        throw new ConflictError(`Only a split-test variant can be promoted; this is a ${rule.rule_type} rule`);
      }
      const node = await this.deps.nodeService.get(orgId, slug, tx);
      // The node update merges a payload of the same type (JSON Merge Patch): null out the keys the
      // variant does not set, so the result is exactly the variant's payload.
      const payload =
        rule.function_type === node.function_type
          ? { ...Object.fromEntries(Object.keys(node.payload).map((key) => [key, null])), ...rule.payload }
          : rule.payload;
      const updated = await this.deps.nodeService.updateIn(tx, orgId, slug, { function_type: rule.function_type, payload });
      for (const r of await this.deps.rules.listForNode(tx, node.id)) {
        if (ruleTypes[r.rule_type].variant) await this.deps.rules.delete(tx, r.id);
      }
      this.changed(tx, node.id);
      return updated;
    });
  }

  private changed(tx: Executor, nodeId: string): void {
    const listener = this.deps.onRulesChanged;
    if (listener) this.deps.store.afterCommit(tx, () => listener(nodeId));
  }

  private async validate(tx: Executor, rule: RuleRow): Promise<void> {
    const type: RuleTypeDef = ruleTypes[rule.rule_type];
    const conditions = parseOrThrow(type.conditions, rule.conditions, 'conditions');
    validatePayload(rule.function_type, rule.payload);
    if (type.checkSiblings) {
      const siblings = (await this.deps.rules.listForNode(tx, rule.node_id))
        .filter((r) => r.rule_type === rule.rule_type && r.id !== rule.id)
        .map((r) => type.parse(r.conditions))
        .filter((c) => c !== undefined);
      const details = type.checkSiblings(conditions, siblings);
      if (details) throw new ValidationError(details);
    }
  }
}
