import { z } from 'zod';
import { BATCH_STATUSES, oneOf, pagination, text, timestamp } from './common.ts';
import { payloadObject } from './payloads.ts';

export const BATCH_FUNCTION_TYPES = ['redirect', 'vcard', 'wifi', 'microsite'] as const;

export const CreateBatchBody = z
  .strictObject({
    label: text(200),
    prefix: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'must be 1 to 32 letters, digits, _ or -'),
    quantity: z
      .number({ error: 'must be a number' })
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(500, 'must be at most 500'),
    function_type: oneOf(BATCH_FUNCTION_TYPES),
    base_payload: payloadObject.optional(),
    template_id: z.string().max(100).optional(),
  })
  .meta({ id: 'CreateBatchBody' });

export const UpdateBatchBody = z
  .strictObject({
    label: text(200).optional(),
    status: oneOf(['writing', 'deployed'] as const).optional(),
  })
  .meta({ id: 'UpdateBatchBody' });

export const ListBatchesQuery = z.strictObject({
  status: oneOf(BATCH_STATUSES).optional(),
  ...pagination,
});

export const ManifestQuery = z.object({
  format: oneOf(['json', 'csv', 'pdf'] as const).optional(),
});

export const Batch = z
  .object({
    id: z.string(),
    label: z.string(),
    prefix: z.string(),
    quantity: z.number().int(),
    function_type: z.string(),
    status: oneOf(BATCH_STATUSES),
    manifest_url: z.string().nullable(),
    template_id: z.string().nullable(),
    failure_reason: z.string().nullable(),
    nodes_generated: z.number().int(),
    nodes_written: z.number().int(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Batch' });
export type BatchT = z.infer<typeof Batch>;

export const ManifestRow = z.object({
  serial: z.string(),
  slug: z.string(),
  url: z.string(),
  id: z.string(),
  status: z.string(),
  hardware_id: z.string().nullable(),
});
export const Manifest = z.object({ batch: Batch, nodes: z.array(ManifestRow) }).meta({ id: 'Manifest' });
