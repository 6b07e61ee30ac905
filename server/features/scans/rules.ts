/**
 * Routing-rule evaluation at scan time (DESIGN §3 "Routing rules"). Pure: no I/O, no clock of
 * its own: the caller passes the instant, the visitor and the rules. What each rule type checks
 * is in its folder under server/ruleTypes/; this orders a node's rules, compiles them through
 * the registry and picks the first match.
 */
import type { Matcher, ScanContext } from '../../ruleTypes/define.ts';
import { ruleTypeOf } from '../../ruleTypes/registry.ts';

export type { DeviceType, OsFamily, ScanContext } from '../../ruleTypes/define.ts';

export interface ScanRule {
  id: string;
  rule_type: string;
  /** As stored; read through the rule type's schema when compiled. */
  conditions: unknown;
  function_type: string;
  payload: Record<string, unknown>;
  priority: number;
  enabled: boolean;
  created_at: string;
}

/** Rules in evaluation order: priority ascending, then oldest first (then id, for stability). */
export function orderRules<T extends Pick<ScanRule, 'priority' | 'created_at' | 'id'>>(rules: readonly T[]): T[] {
  return [...rules].sort(
    (a, b) =>
      a.priority - b.priority ||
      (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0) ||
      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

/**
 * A compiled rule set for one node: ordered, with disabled rules and rules whose type or
 * conditions this build cannot read dropped, each with its matcher. Compile once per node (the
 * resolver caches it), evaluate per scan.
 */
export interface CompiledRules {
  rules: ReadonlyArray<{ rule: ScanRule; match: Matcher }>;
}

/** A rule's conditions as its type's schema reads them; undefined = not valid, or an unknown type. */
export function readConditions(rule: Pick<ScanRule, 'rule_type' | 'conditions'>): unknown {
  return ruleTypeOf(rule.rule_type)?.parse(rule.conditions);
}

export function compileRules(rules: readonly ScanRule[], read: (rule: ScanRule) => unknown = readConditions): CompiledRules {
  const ordered = orderRules(rules.filter((r) => r.enabled));
  // Each type compiles its own rules together, in evaluation order (split buckets depend on it).
  const byType = new Map<string, { at: number[]; conditions: unknown[] }>();
  ordered.forEach((rule, at) => {
    const conditions = read(rule);
    if (conditions === undefined) return; // validated on write; skip anything else
    let group = byType.get(rule.rule_type);
    if (!group) byType.set(rule.rule_type, (group = { at: [], conditions: [] }));
    group.at.push(at);
    group.conditions.push(conditions);
  });
  const matchers: Array<Matcher | undefined> = [];
  for (const [type, group] of byType) {
    const compiled = ruleTypeOf(type)?.compile(group.conditions) ?? [];
    group.at.forEach((at, k) => (matchers[at] = compiled[k]));
  }
  const out: Array<{ rule: ScanRule; match: Matcher }> = [];
  ordered.forEach((rule, at) => {
    const match = matchers[at];
    if (match) out.push({ rule, match });
  });
  return { rules: out };
}

/** The first matching rule, or null (serve the node's own payload). */
export function evaluateRules(compiled: CompiledRules, ctx: ScanContext): ScanRule | null {
  for (const { rule, match } of compiled.rules) if (match(ctx)) return rule;
  return null;
}
