import { z } from 'zod';
import { functionType, pagination, text, timestamp } from './common.ts';
import { payloadObject } from './payloads.ts';

export const CreateTemplateBody = z
  .strictObject({
    name: text(200),
    function_type: functionType,
    payload: payloadObject,
    locked_fields: z.array(z.string()).max(20).optional(),
  })
  .meta({ id: 'CreateTemplateBody' });

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
