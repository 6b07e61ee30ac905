import type { z } from 'zod';
import type { FunctionType } from '../../schemas/common.ts';
import { payloadSchemas } from '../../schemas/payloads.ts';
import { functionTypes } from '../../functionTypes/registry.ts';
import { ValidationError } from '../../platform/errors.ts';
import { parseOrThrow } from '../../platform/validation.ts';
import type { TemplateRow } from '../templates/index.ts';

/** Validates a complete payload for its type; returns it exactly as sent. */
export function validatePayload(type: FunctionType, payload: unknown, prefix = 'payload'): Record<string, unknown> {
  parseOrThrow(functionTypes[type].schema, payload, prefix);
  return payload as Record<string, unknown>;
}

/** Whether a stored payload is complete for its type (batch nodes may start unconfigured). */
export function isConfigured(type: FunctionType, payload: unknown): boolean {
  return functionTypes[type].isComplete(payload);
}

/**
 * Rejects any locked field that `payload` would set to a value other than the template's
 * (sending the template's own value is not an override).
 */
export function assertNoLockedOverride(template: TemplateRow, payload: Record<string, unknown>, prefix = 'payload'): void {
  const details: Record<string, string> = {};
  for (const field of template.locked_fields) {
    if (field in payload && JSON.stringify(payload[field]) !== JSON.stringify(template.payload[field])) {
      details[`${prefix}.${field}`] = 'Locked by template';
    }
  }
  if (Object.keys(details).length > 0) throw new ValidationError(details, 'Locked by template');
}

/** Template defaults under the node's own values; locked fields always from the template. */
export function applyTemplate(template: TemplateRow, payload: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...template.payload, ...payload };
  for (const field of template.locked_fields) {
    if (field in template.payload) merged[field] = template.payload[field];
    else delete merged[field];
  }
  return merged;
}

export function assertTemplateFits(template: TemplateRow, type: FunctionType, field = 'template_id'): void {
  if (template.function_type !== type) {
    throw new ValidationError({ [field]: `is a template for ${template.function_type} nodes, not ${type}` });
  }
}

/**
 * A partial payload (a template's, an unconfigured batch node's): every field it sets must be
 * valid for the type, but required fields may be left out. Each field is checked on its own.
 */
export function validatePartialPayload(type: FunctionType, payload: Record<string, unknown>): void {
  const shape = payloadSchemas[type].shape as Record<string, z.ZodType>;
  const details: Record<string, string> = {};
  for (const [key, value] of Object.entries(payload)) {
    // Object.hasOwn: `constructor`, `toString` … are not payload fields either.
    const field = Object.hasOwn(shape, key) ? shape[key] : undefined;
    if (!field) {
      details[`payload.${key}`] = 'is not a known field';
      continue;
    }
    const result = field.safeParse(value);
    if (!result.success) details[`payload.${key}`] = result.error.issues[0]?.message ?? 'is invalid';
  }
  if (Object.keys(details).length > 0) throw new ValidationError(details);
}
