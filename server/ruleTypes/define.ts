/**
 * What a rule type is: its conditions schema (zod, in the type's schema.ts), how a node's rules
 * of that type are compiled into matchers once (when the scan path caches the node), and, when
 * the type constrains a node's rules together, the check made on write.
 */
import type { z } from 'zod';

export type DeviceType = 'mobile' | 'tablet' | 'desktop' | 'other' | 'unknown';
export type OsFamily = 'ios' | 'android' | 'windows' | 'macos' | 'linux' | 'chromeos' | 'other' | 'unknown';

/** What a rule may look at: the scan, never anything else (no I/O, no clock of its own). */
export interface ScanContext {
  /** The scan instant, epoch milliseconds. */
  at: number;
  country: string | null;
  device_type: DeviceType;
  os: OsFamily;
  /** The cookieless daily visitor key. */
  visitor: string;
  /** Identifies the node, so one visitor lands in independent buckets on different nodes. */
  node_id: string;
}

/** Whether one compiled rule matches a scan. Called per scan: keep it cheap. */
export type Matcher = (ctx: ScanContext) => boolean;

export interface RuleTypeSpec<S extends z.ZodType> {
  conditions: S;
  /**
   * One matcher per rule, for a node's enabled rules of this type whose conditions are valid,
   * given in evaluation order (priority, then age). Types whose rules depend on each other
   * (traffic_split's buckets) see them all at once.
   */
  compile(all: readonly z.infer<S>[]): Matcher[];
  /**
   * On create and update: checks a rule's conditions against the node's other rules of the same
   * type; returns 422 details (field → message), or null when they fit together.
   */
  checkSiblings?(conditions: z.infer<S>, siblings: readonly z.infer<S>[]): Record<string, string> | null;
  /**
   * For types whose rules are the variants of a split test: the percentage of the node's visitors
   * a rule takes. The node's analytics then reports each variant (and the node's own payload for
   * the share left), and a variant can be promoted to the node's payload.
   */
  variant?: { share(conditions: z.infer<S>): number };
}

export interface RuleTypeDef<S extends z.ZodType = z.ZodType> extends RuleTypeSpec<S> {
  /** Stored conditions as the schema reads them, or undefined when they are not valid (the rule is skipped). */
  parse(conditions: unknown): z.infer<S> | undefined;
}

export function defineRuleType<S extends z.ZodType>(spec: RuleTypeSpec<S>): RuleTypeDef<S> {
  return {
    ...spec,
    parse(conditions) {
      const result = spec.conditions.safeParse(conditions);
      return result.success ? result.data : undefined;
    },
  };
}

/** compile() for types whose rules match independently of each other. */
export function eachRule<C>(match: (conditions: C, ctx: ScanContext) => boolean): (all: readonly C[]) => Matcher[] {
  return (all) => all.map((c) => (ctx: ScanContext) => match(c, ctx));
}
