import { z } from 'zod';

export const FUNCTION_TYPES = ['redirect', 'vcard', 'wifi', 'microsite', 'digital_card', 'action'] as const;
export type FunctionType = (typeof FUNCTION_TYPES)[number];

export const NODE_STATUSES = ['draft', 'in_production', 'active', 'paused', 'lost', 'retired'] as const;
export type NodeStatus = (typeof NODE_STATUSES)[number];

export const BATCH_STATUSES = ['pending', 'generating', 'ready', 'writing', 'deployed', 'failed'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

export const PLANS = ['developer', 'pro', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

/** An enum whose error message lists the allowed values (spec: "must be one of …"). */
export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: () => `must be one of: ${values.join(', ')}` });
}

export const functionType = oneOf(FUNCTION_TYPES).meta({ id: 'FunctionType' });

/** Non-blank text with a length cap (kept exactly as sent). */
export function text(max: number) {
  // min(1) and the pattern say in the document what the server refuses: an empty or
  // whitespace-only string (`\S` is exactly what String.prototype.trim() removes).
  return z
    .string({ error: 'must be a string' })
    .max(max, `must be at most ${max} characters`)
    .min(1, 'must not be empty')
    .regex(/\S/, 'must not be empty');
}

export function isHttpUrl(value: string): boolean {
  if (!/^https?:\/\//i.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
  } catch {
    return false;
  }
}

const HTTP_URL_TEXT = 'must be an http or https URL';

export const httpUrl = z
  .string({ error: 'must be a string' })
  .max(2048, 'must be at most 2048 characters')
  // The pattern is what the document can say (a scheme and a host); isHttpUrl also parses it.
  .regex(/^[Hh][Tt][Tt][Pp][Ss]?:\/\/[^/?#]/, HTTP_URL_TEXT)
  .refine(isHttpUrl, HTTP_URL_TEXT)
  .meta({ description: 'An absolute http or https URL', example: 'https://example.com/menu' });

/**
 * Replaces what zod renders for a query value that arrives as a string but is a number: a
 * generated client sends a number, and the bounds are in the document.
 */
export function documentedAs(schema: Record<string, unknown>) {
  return ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
    const description = jsonSchema.description;
    for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
    Object.assign(jsonSchema, schema, description === undefined ? {} : { description });
  };
}

/** Query integers arrive as strings; the document types them as integers with their bounds. */
export function queryInt(min: number, max: number, fallback: number) {
  return z
    .string()
    .regex(/^[0-9]+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .optional()
    .transform((v) => v ?? fallback)
    .meta({
      override: documentedAs({
        type: 'integer',
        minimum: min,
        ...(max < Number.MAX_SAFE_INTEGER ? { maximum: max } : {}),
        default: fallback,
      }),
    });
}

export const pagination = {
  limit: queryInt(1, 100, 50),
  offset: queryInt(0, Number.MAX_SAFE_INTEGER, 0),
};

export const timestamp = z.string().meta({ description: 'ISO 8601 timestamp', example: '2026-11-21T15:04:05.123Z' });

export const ErrorBody = z
  .object({
    data: z.null(),
    error: z.string(),
    details: z.record(z.string(), z.string()).optional(),
  })
  .meta({ id: 'Error' });

export const Deleted = z.object({ deleted: z.literal(true) });
