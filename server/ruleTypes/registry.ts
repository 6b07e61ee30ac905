/**
 * Every rule type, by name: its conditions schema, how a node's rules of that type match a scan,
 * and any check they need together on write. The rules API and the scan path both go through
 * this record; a type in RULE_TYPES without an entry here, or an entry for an unknown type, does
 * not compile. Adding a type: docs/architecture.md.
 */
import { conditionSchemas, type RuleType } from '../schemas/rules.ts';
import type { RuleTypeDef } from './define.ts';
import { deviceBased } from './device_based/index.ts';
import { geoBased } from './geo_based/index.ts';
import { timeBased } from './time_based/index.ts';
import { trafficSplit } from './traffic_split/index.ts';

/** Exactly one definition per rule type, each with the schema server/schemas/rules.ts lists. */
export type RuleTypeRegistry = { [T in RuleType]: RuleTypeDef<(typeof conditionSchemas)[T]> };

export const ruleTypes = {
  time_based: timeBased,
  geo_based: geoBased,
  device_based: deviceBased,
  traffic_split: trafficSplit,
} as const satisfies RuleTypeRegistry;

/** The definition of a stored rule type name, or undefined for a name this build does not know. */
export function ruleTypeOf(name: string): RuleTypeDef | undefined {
  return Object.hasOwn(ruleTypes, name) ? (ruleTypes as Record<string, RuleTypeDef>)[name] : undefined;
}
