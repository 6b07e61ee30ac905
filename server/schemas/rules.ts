import { z } from 'zod';
import { FUNCTION_TYPES, type FunctionType, functionType, oneOf, pagination, timestamp } from './common.ts';
import { allOf, exclusive, pascal } from './documented.ts';
import { payloadObject, payloadSchemas } from './payloads.ts';
import { DeviceConditions } from '../ruleTypes/device_based/schema.ts';
import { GeoConditions } from '../ruleTypes/geo_based/schema.ts';
import { TimeConditions } from '../ruleTypes/time_based/schema.ts';
import { SplitConditions } from '../ruleTypes/traffic_split/schema.ts';

export const RULE_TYPES = ['time_based', 'geo_based', 'device_based', 'traffic_split'] as const;
export type RuleType = (typeof RULE_TYPES)[number];

// Conditions per rule type (DESIGN §3 "Routing rules"). Each type's schema lives in its folder
// under server/ruleTypes/ (zod only, so the console can import it from here);
// server/ruleTypes/registry.ts adds how a scan is matched.

export { DEVICES, OPERATING_SYSTEMS, DeviceConditions, type DeviceConditionsT } from '../ruleTypes/device_based/schema.ts';
export { GeoConditions, type GeoConditionsT } from '../ruleTypes/geo_based/schema.ts';
export { TimeConditions, TimeWindow, type TimeConditionsT } from '../ruleTypes/time_based/schema.ts';
export { SplitConditions, type SplitConditionsT } from '../ruleTypes/traffic_split/schema.ts';

/** One entry per rule type: a type missing here (or unknown to RULE_TYPES) does not compile. */
export const conditionSchemas = {
  time_based: TimeConditions,
  geo_based: GeoConditions,
  device_based: DeviceConditions,
  traffic_split: SplitConditions,
} as const satisfies Record<RuleType, z.ZodType>;

/** What the server parses; conditions and payload are checked against their types in RuleService. */
export const CreateRuleBody = z.strictObject({
  rule_type: oneOf(RULE_TYPES),
  conditions: z.record(z.string(), z.unknown(), { error: 'must be an object' }),
  function_type: functionType,
  payload: payloadObject,
  priority: z.number().int().min(0).max(1_000_000).optional().meta({ description: 'Lower runs first; default 0.' }),
  enabled: z.boolean().optional(),
});

// CreateRuleBody as the document shows it: conditions selected by rule_type, payload by
// function_type. Open objects joined by allOf (with unevaluatedProperties: false on the whole).
const ruleConditions = exclusive(
  RULE_TYPES.map((type) =>
    z.object({ rule_type: z.literal(type), conditions: conditionSchemas[type] }).meta({ id: `${pascal(type)}RuleConditions` }),
  ),
);
const rulePayload = exclusive(
  FUNCTION_TYPES.map((type: FunctionType) =>
    z.object({ function_type: z.literal(type), payload: payloadSchemas[type] }).meta({ id: `${pascal(type)}RulePayload` }),
  ),
);
export const CreateRuleRequest = allOf(
  [ruleConditions, rulePayload, z.object({ priority: CreateRuleBody.shape.priority, enabled: CreateRuleBody.shape.enabled })],
  'CreateRuleBody',
  'A routing rule: conditions are the *Conditions component of its rule_type, payload the *Payload component of its function_type.',
);

export const UpdateRuleBody = z
  .strictObject({
    rule_type: oneOf(RULE_TYPES).optional(),
    conditions: z.record(z.string(), z.unknown(), { error: 'must be an object' }).optional(),
    function_type: functionType.optional(),
    payload: payloadObject.optional(),
    priority: z.number().int().min(0).max(1_000_000).optional(),
    enabled: z.boolean().optional(),
  })
  .meta({ id: 'UpdateRuleBody' });

export const Rule = z
  .object({
    id: z.string(),
    rule_type: oneOf(RULE_TYPES),
    conditions: z.record(z.string(), z.unknown()),
    function_type: functionType,
    payload: z.record(z.string(), z.unknown()),
    priority: z.number().int(),
    enabled: z.boolean(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Rule' });
export type RuleT = z.infer<typeof Rule>;

export const ListRulesQuery = z.strictObject({ ...pagination });

export const RuleParams = z.object({ slug: z.string(), ruleId: z.string() });
