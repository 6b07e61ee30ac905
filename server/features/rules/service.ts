import type { Database } from 'better-sqlite3';
import type { Clock } from '../../platform/clock.ts';
import { ValidationError, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { parseOrThrow } from '../../platform/validation.ts';
import type { FunctionType } from '../../schemas/common.ts';
import { conditionSchemas, type RuleT, type RuleType } from '../../schemas/rules.ts';
import { validatePayload } from '../nodes/payload.ts';
import type { NodeService } from '../nodes/service.ts';
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
  db: Database;
  clock: Clock;
  rules: RulesRepo;
  nodeService: NodeService;
  /** Told after any rule of a node changed (scan-path caches listen). */
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

  list(orgId: string, slug: string): RuleRow[] {
    const node = this.deps.nodeService.get(orgId, slug);
    return this.deps.rules.listForNode(node.id);
  }

  get(orgId: string, slug: string, id: string): RuleRow {
    const node = this.deps.nodeService.get(orgId, slug);
    const rule = this.deps.rules.get(node.id, id);
    if (!rule) throw notFound.rule();
    return rule;
  }

  create(orgId: string, slug: string, input: RuleInput): RuleRow {
    return this.deps.db.transaction(() => {
      const node = this.deps.nodeService.get(orgId, slug);
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
      this.validate(rule);
      this.deps.rules.insert(rule);
      this.deps.onRulesChanged?.(node.id);
      return rule;
    })();
  }

  update(orgId: string, slug: string, id: string, input: Partial<RuleInput>): RuleRow {
    return this.deps.db.transaction(() => {
      const current = this.get(orgId, slug, id);
      const next: RuleRow = { ...current, updated_at: new Date(this.deps.clock.now()).toISOString() };
      for (const key of ['rule_type', 'conditions', 'function_type', 'payload', 'priority', 'enabled'] as const) {
        if (input[key] !== undefined) Object.assign(next, { [key]: input[key] });
      }
      this.validate(next);
      this.deps.rules.update(next);
      this.deps.onRulesChanged?.(current.node_id);
      return next;
    })();
  }

  remove(orgId: string, slug: string, id: string): void {
    this.deps.db.transaction(() => {
      const rule = this.get(orgId, slug, id);
      this.deps.rules.delete(rule.id);
      this.deps.onRulesChanged?.(rule.node_id);
    })();
  }

  private validate(rule: RuleRow): void {
    parseOrThrow(conditionSchemas[rule.rule_type], rule.conditions, 'conditions');
    validatePayload(rule.function_type, rule.payload);
    if (rule.rule_type === 'traffic_split') {
      const others = this.deps.rules
        .listForNode(rule.node_id)
        .filter((r) => r.rule_type === 'traffic_split' && r.id !== rule.id)
        .reduce((sum, r) => sum + Number((r.conditions as { weight: number }).weight), 0);
      const weight = (rule.conditions as { weight: number }).weight;
      if (others + weight > 100) {
        throw new ValidationError({
          'conditions.weight': `split weights of a node must sum to at most 100 (${100 - others} left)`,
        });
      }
    }
  }
}
