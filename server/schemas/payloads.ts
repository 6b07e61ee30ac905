import { z } from 'zod';
import { FUNCTION_TYPES, type FunctionType } from './common.ts';
import { partialStrict, pascal } from './documented.ts';
import { RedirectPayload } from '../functionTypes/redirect/schema.ts';
import { VcardPayload } from '../functionTypes/vcard/schema.ts';
import { WifiPayload } from '../functionTypes/wifi/schema.ts';
import { MicrositePayload } from '../functionTypes/microsite/schema.ts';
import { DigitalCardPayload } from '../functionTypes/digital_card/schema.ts';
import { ActionPayload } from '../functionTypes/action/schema.ts';

// Payload schemas per function type (DESIGN §3). Strict: unknown keys are rejected. Each type's
// schema lives in its folder under server/functionTypes/ (zod only, so the console can import
// it from here); server/functionTypes/registry.ts adds what a scan serves.

export { RedirectPayload, type RedirectPayloadT } from '../functionTypes/redirect/schema.ts';
export { VcardPayload, type VcardPayloadT } from '../functionTypes/vcard/schema.ts';
export { WIFI_SECURITY, WifiPayload, type WifiPayloadT } from '../functionTypes/wifi/schema.ts';
export { ACTION_TYPES, ActionPayload, type ActionPayloadT } from '../functionTypes/action/schema.ts';
export { MicrositePayload, type MicrositePayloadT } from '../functionTypes/microsite/schema.ts';
export { DigitalCardPayload, type DigitalCardPayloadT } from '../functionTypes/digital_card/schema.ts';

/** One entry per function type: a type missing here (or unknown to FUNCTION_TYPES) does not compile. */
export const payloadSchemas = {
  redirect: RedirectPayload,
  vcard: VcardPayload,
  wifi: WifiPayload,
  microsite: MicrositePayload,
  digital_card: DigitalCardPayload,
  action: ActionPayload,
} as const satisfies Record<FunctionType, z.ZodObject>;

/** The keys each payload type knows (for templates' locked_fields and partial payloads), in schema order. */
export const payloadFields = {} as Record<FunctionType, readonly string[]>;
for (const type of FUNCTION_TYPES) payloadFields[type] = Object.keys(payloadSchemas[type].shape);

export type Payload = Record<string, unknown>;

/** Any JSON object (the shape is checked against the function type by the domain). */
export const payloadObject = z
  .record(z.string(), z.unknown(), { error: 'must be an object' })
  .meta({ description: 'Type-specific configuration: one of the *Payload components, as function_type says.' });

/**
 * Each payload with every field optional, as a component of the document: a template's payload,
 * or the payload of a node or batch made from a template (the template fills in the rest).
 */
export const partialPayloadSchemas = {} as Record<FunctionType, z.ZodType>;
for (const type of FUNCTION_TYPES) {
  partialPayloadSchemas[type] = partialStrict(payloadSchemas[type].shape).meta({
    id: `${pascal(type)}PartialPayload`,
    description: `Any fields of ${pascal(type)}Payload (a template fills in the rest).`,
  });
}
