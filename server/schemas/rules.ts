import { z } from 'zod';
import { FUNCTION_TYPES, type FunctionType, functionType, oneOf, pagination, timestamp } from './common.ts';
import { allOf, exclusive, pascal } from './documented.ts';
import { payloadObject, payloadSchemas } from './payloads.ts';

export const RULE_TYPES = ['time_based', 'geo_based', 'device_based', 'traffic_split'] as const;
export type RuleType = (typeof RULE_TYPES)[number];
export const DEVICES = ['mobile', 'tablet', 'desktop'] as const;
export const OPERATING_SYSTEMS = ['ios', 'android', 'windows', 'macos', 'linux'] as const;

function isTimeZone(name: string): boolean {
  // Intl also takes UTC offsets ("+05:00") as time zones; they are not IANA names and ignore DST.
  if (/^[+-]/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const hhmm = z.string().regex(/^([01][0-9]|2[0-3]):[0-5][0-9]$/, 'must be a time HH:MM (00:00 to 23:59)');

export const TimeWindow = z.strictObject({
  days: z
    .array(z.number().int().min(1, 'must be 1 (Monday) to 7 (Sunday)').max(7, 'must be 1 (Monday) to 7 (Sunday)'))
    .min(1, 'must list at least one day'),
  start_time: hhmm,
  end_time: hhmm,
});

export const TimeConditions = z
  .strictObject({
    timezone: z.string().refine(isTimeZone, 'must be an IANA time zone name such as Europe/Paris'),
    windows: z.array(TimeWindow).min(1, 'must have at least one window').max(50),
  })
  .meta({ id: 'TimeConditions' });

export const GeoConditions = z
  .strictObject({
    countries: z
      .array(z.string().regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code such as FR'))
      .min(1, 'must list at least one country')
      .max(250),
  })
  .meta({ id: 'GeoConditions' });

export const DeviceConditions = z
  .strictObject({
    devices: z.array(oneOf(DEVICES)).min(1).optional(),
    os: z.array(oneOf(OPERATING_SYSTEMS)).min(1).optional(),
  })
  .refine((c) => c.devices !== undefined || c.os !== undefined, 'must set devices or os')
  .meta({ id: 'DeviceConditions', anyOf: [{ required: ['devices'] }, { required: ['os'] }] });

export const SplitConditions = z
  .strictObject({
    weight: z.number().int('must be a whole number').min(1, 'must be 1 to 100').max(100, 'must be 1 to 100'),
  })
  .meta({ id: 'SplitConditions' });

export const conditionSchemas = {
  time_based: TimeConditions,
  geo_based: GeoConditions,
  device_based: DeviceConditions,
  traffic_split: SplitConditions,
} as const;

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
