import { z } from 'zod';
import { FUNCTION_TYPES, type FunctionType, NODE_STATUSES, functionType, httpUrl, oneOf, pagination, text, timestamp } from './common.ts';
import { discriminated, exclusive, pascal } from './documented.ts';
import { partialPayloadSchemas, payloadObject, payloadSchemas } from './payloads.ts';

const createStatus = oneOf(['active', 'draft'] as const).optional().meta({ description: 'Defaults to active.' });
const templateId = z.string().max(100).meta({ description: 'A template for this function_type (GET /v1/templates): its fields fill in the payload, its locked fields cannot be changed.' });

/** What a scan of an expired or used-up node gets (docs/api.md "Node limits"). */
export const AfterLimit = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('gone') }).meta({ description: 'A 410 page: "This code has expired" or "… has reached its scan limit".' }),
    z.strictObject({ type: z.literal('redirect'), url: httpUrl }).meta({ description: 'A 302 to this fallback address.' }),
  ])
  .meta({ id: 'AfterLimit', description: 'What a scan gets once the node has expired or reached max_scans. Default: gone.' });
export type AfterLimitT = z.infer<typeof AfterLimit>;

const RFC3339_TEXT = 'must be an RFC 3339 date-time with a zone, e.g. 2026-12-31T23:59:59Z';
/** An RFC 3339 date-time with its zone (an instant); [0-9] rather than \d, as the document's patterns do. */
const rfc3339 = z
  .string({ error: RFC3339_TEXT })
  .regex(/^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$/, RFC3339_TEXT)
  .refine((s) => !Number.isNaN(Date.parse(s)), RFC3339_TEXT);

/** Node limits as create and PATCH take them (null clears one on PATCH); the import reads them too. */
export const nodeLimitFields = {
  expires_at: rfc3339
    .nullable()
    .optional()
    .meta({ description: 'From this instant on, a scan gets after_limit. null = never expires.' }),
  max_scans: z
    .number({ error: 'must be a whole number' })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(1_000_000_000, 'must be at most 1000000000')
    .nullable()
    .optional()
    .meta({ description: 'Counted scans (those scan_count counts: bots and previews are not) the node serves; later scans get after_limit. null = no limit.' }),
  password: z
    .string({ error: 'must be a string' })
    .min(4, 'must be at least 4 characters')
    .max(200, 'must be at most 200 characters')
    .nullable()
    .optional()
    .meta({ description: 'Write-only. A scan shows a password page first; stored only as a scrypt hash. null removes the password.', writeOnly: true }),
  after_limit: AfterLimit.nullable().optional(),
};

/** What the server parses; the payload is checked against function_type in the service (NodeService.create). */
export const CreateNodeBody = z.strictObject({
  label: text(200),
  function_type: functionType,
  payload: payloadObject,
  template_id: templateId.optional(),
  status: createStatus,
  ...nodeLimitFields,
});

/** One function type's create body: a complete payload, or any part of it with a template. */
function createNodeOf(type: FunctionType) {
  const common = { label: text(200), function_type: z.literal(type), status: createStatus, ...nodeLimitFields };
  return exclusive(
    [
      z.strictObject({ ...common, payload: payloadSchemas[type] }),
      z.strictObject({ ...common, template_id: templateId, payload: partialPayloadSchemas[type] }),
    ],
    `Create${pascal(type)}NodeBody`,
  );
}

/** CreateNodeBody as the document shows it: the payload schema selected by function_type. */
export const CreateNodeRequest = discriminated(
  'function_type',
  Object.fromEntries(FUNCTION_TYPES.map((type) => [type, createNodeOf(type)])),
  'CreateNodeBody',
  'A node: its payload is the *Payload component of its function_type (with template_id, any part of it).',
);

export const UpdateNodeBody = z
  .strictObject({
    label: text(200).optional(),
    function_type: functionType.optional(),
    payload: z
      .record(z.string(), z.unknown(), { error: 'must be an object' })
      .optional()
      .meta({ description: 'JSON Merge Patch (RFC 7396) onto the stored payload; null removes a key. The result must be a complete *Payload of the function_type; with a new function_type it replaces the payload.' }),
    status: oneOf(['active', 'paused', 'retired'] as const).optional(),
    ...nodeLimitFields,
  })
  .meta({ id: 'UpdateNodeBody' });

export const ListNodesQuery = z.strictObject({
  status: oneOf(NODE_STATUSES).optional(),
  function_type: oneOf(FUNCTION_TYPES).optional(),
  batch_id: z.string().min(1, 'must not be empty').max(100).optional(),
  q: z.string().max(200).optional().meta({ description: 'Search in label, slug and serial.' }),
  ...pagination,
});

export const SlugParams = z.object({ slug: z.string() });

export const Node = z
  .object({
    id: z.string(),
    slug: z.string(),
    label: z.string(),
    url: z.string(),
    function_type: functionType,
    payload: z.record(z.string(), z.unknown()),
    status: oneOf(NODE_STATUSES),
    hardware_id: z.string().nullable(),
    scan_count: z.number().int(),
    template_id: z.string().nullable(),
    batch_id: z.string().nullable(),
    serial: z.string().nullable(),
    expires_at: timestamp.nullable(),
    max_scans: z.number().int().nullable(),
    password_protected: z.boolean().meta({ description: 'A password page comes first (the password itself is never returned).' }),
    after_limit: AfterLimit,
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Node' });
export type NodeT = z.infer<typeof Node>;

export const NodeCreated = Node.pick({ id: true, slug: true, url: true, function_type: true, status: true }).meta({
  id: 'NodeCreated',
});
export const NodeUpdated = Node.pick({
  id: true,
  slug: true,
  label: true,
  url: true,
  function_type: true,
  payload: true,
  status: true,
}).meta({ id: 'NodeUpdated' });
export const NodeDeleted = z.object({ deleted: z.literal(true), slug: z.string() });
