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
  return z
    .string({ error: 'must be a string' })
    .max(max, `must be at most ${max} characters`)
    .refine((s) => s.trim().length > 0, 'must not be empty');
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

export const httpUrl = z
  .string({ error: 'must be a string' })
  .max(2048, 'must be at most 2048 characters')
  .refine(isHttpUrl, 'must be an http or https URL');

/** Query integers arrive as strings. */
export function queryInt(min: number, max: number, fallback: number) {
  return z
    .string()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().int().min(min, `must be at least ${min}`).max(max, `must be at most ${max}`))
    .optional()
    .transform((v) => v ?? fallback);
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
