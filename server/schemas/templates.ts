import { z } from 'zod';
import { FUNCTION_TYPES, type FunctionType, functionType, pagination, text, timestamp } from './common.ts';
import { discriminated, pascal } from './documented.ts';
import { partialPayloadSchemas, payloadFields, payloadObject } from './payloads.ts';

/** What the server parses; payload and locked_fields are checked against function_type in TemplateService. */
export const CreateTemplateBody = z.strictObject({
  name: text(200),
  function_type: functionType,
  payload: payloadObject,
  locked_fields: z.array(z.string()).max(20).optional(),
});

function createTemplateOf(type: FunctionType) {
  return z
    .strictObject({
      name: text(200),
      function_type: z.literal(type),
      payload: partialPayloadSchemas[type],
      locked_fields: z
        .array(z.enum(payloadFields[type] as [string, ...string[]]))
        .max(20)
        .optional()
        .meta({ description: 'Payload fields every bound node takes from the template, unchangeable on the node.' }),
    })
    .meta({ id: `Create${pascal(type)}TemplateBody` });
}

/** CreateTemplateBody as the document shows it: payload and locked fields selected by function_type. */
export const CreateTemplateRequest = discriminated(
  'function_type',
  Object.fromEntries(FUNCTION_TYPES.map((type) => [type, createTemplateOf(type)])),
  'CreateTemplateBody',
  'A template: any fields of the *Payload component of its function_type.',
);

export const UpdateTemplateBody = z
  .strictObject({
    name: text(200).optional(),
    payload: z
      .record(z.string(), z.unknown(), { error: 'must be an object' })
      .optional()
      .meta({ description: 'JSON Merge Patch onto the template payload.' }),
    locked_fields: z.array(z.string()).max(20).optional(),
  })
  .meta({ id: 'UpdateTemplateBody' });

export const ListTemplatesQuery = z.strictObject({ ...pagination });

export const Template = z
  .object({
    id: z.string(),
    name: z.string(),
    function_type: functionType,
    payload: z.record(z.string(), z.unknown()),
    locked_fields: z.array(z.string()),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Template' });
export type TemplateT = z.infer<typeof Template>;

export const IdParams = z.object({ id: z.string() });
