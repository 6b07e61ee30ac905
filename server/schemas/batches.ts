import { z } from 'zod';
import { BATCH_STATUSES, oneOf, pagination, text, timestamp } from './common.ts';
import { discriminated, exclusive, pascal } from './documented.ts';
import { TAG_PROTECTIONS } from './nfc.ts';
import { partialPayloadSchemas, payloadObject, payloadSchemas } from './payloads.ts';

export const BATCH_FUNCTION_TYPES = ['redirect', 'vcard', 'wifi', 'microsite'] as const;
type BatchFunctionType = (typeof BATCH_FUNCTION_TYPES)[number];

const batchFields = {
  label: text(200),
  prefix: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'must be 1 to 32 letters, digits, _ or -'),
  quantity: z
    .number({ error: 'must be a number' })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(500, 'must be at most 500'),
};
const templateId = z.string().max(100);

/** What the server parses; base_payload is checked against function_type in BatchService. */
export const CreateBatchBody = z.strictObject({
  ...batchFields,
  function_type: oneOf(BATCH_FUNCTION_TYPES),
  base_payload: payloadObject.optional(),
  template_id: templateId.optional(),
});

/** One function type's batch: a complete base payload (or none: the nodes start unconfigured), or any part of it with a template. */
function createBatchOf(type: BatchFunctionType) {
  const common = { ...batchFields, function_type: z.literal(type) };
  return exclusive(
    [
      z.strictObject({ ...common, base_payload: payloadSchemas[type].optional() }),
      z.strictObject({ ...common, template_id: templateId, base_payload: partialPayloadSchemas[type].optional() }),
    ],
    `Create${pascal(type)}BatchBody`,
  );
}

/** CreateBatchBody as the document shows it: base_payload selected by function_type. */
export const CreateBatchRequest = discriminated(
  'function_type',
  Object.fromEntries(BATCH_FUNCTION_TYPES.map((type) => [type, createBatchOf(type)])),
  'CreateBatchBody',
  'A batch of nodes of one function_type; base_payload is its *Payload component (with template_id, any part of it).',
);

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
    serials_provisional: z.boolean().meta({
      description:
        'True when this site numbered the serials itself because its sync remote could not be reached: they may repeat another offline site\'s (docs/sync.md, "Batch serials"). Printing such labels deserves a warning.',
    }),
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
  tag_protection: oneOf(TAG_PROTECTIONS)
    .nullable()
    .meta({ description: "What protects the node's tag (docs/nfc.md, \"Protection per tag\"); null when no tag is written." }),
});
export const Manifest = z.object({ batch: Batch, nodes: z.array(ManifestRow) }).meta({ id: 'Manifest' });
