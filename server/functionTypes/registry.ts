/**
 * Every function type, by name: its payload schema, whether a payload is complete (derived from
 * the schema) and what a scan of it answers. The write path (nodes, rules, templates) and the scan
 * path both go through this record; a type in FUNCTION_TYPES without an entry here, or an entry
 * for an unknown type, does not compile. Adding a type: docs/architecture.md.
 */
import type { FunctionType } from '../schemas/common.ts';
import { payloadSchemas } from '../schemas/payloads.ts';
import type { FunctionTypeDef } from './define.ts';
import { action } from './action/index.ts';
import { digitalCard } from './digital_card/index.ts';
import { microsite } from './microsite/index.ts';
import { redirect } from './redirect/index.ts';
import { vcard } from './vcard/index.ts';
import { wifi } from './wifi/index.ts';

/** Exactly one definition per function type, each with the schema server/schemas/payloads.ts lists. */
export type FunctionTypeRegistry = { [T in FunctionType]: FunctionTypeDef<(typeof payloadSchemas)[T]> };

export const functionTypes = {
  redirect,
  vcard,
  wifi,
  microsite,
  digital_card: digitalCard,
  action,
} as const satisfies FunctionTypeRegistry;

/** The definition of a stored function type name, or undefined for a name this build does not know. */
export function functionTypeOf(name: string): FunctionTypeDef | undefined {
  return Object.hasOwn(functionTypes, name) ? (functionTypes as Record<string, FunctionTypeDef>)[name] : undefined;
}
