import { z } from 'zod';
import { FUNCTION_TYPES, NODE_STATUSES, functionType, oneOf, text, timestamp } from './common.ts';
import { AfterLimit, nodeLimitFields } from './nodes.ts';
import { payloadObject } from './payloads.ts';

/** Rows one POST /v1/nodes/import takes. */
export const IMPORT_MAX_ROWS = 5000;

const keyText = (description: string) => z.string({ error: 'must be a string' }).max(100, 'must be at most 100 characters').meta({ description });

/**
 * One row as the server checks it (per row, so that ?mode=partial can report it and go on): a
 * create when it names no node, else an update of the node its `slug` or `serial` names. Null is
 * the same as leaving a field out (an export writes null for a node without serial or template).
 */
export const NodeImportRow = z.strictObject({
  slug: keyText('Updates the node with this slug (in this organization) instead of creating one.').optional(),
  serial: keyText('Updates the node with this serial (a batch node, e.g. FAIR-001).').optional(),
  label: text(200).optional(),
  function_type: functionType.optional(),
  payload: payloadObject.optional(),
  template_id: z.string({ error: 'must be a string' }).max(100).optional(),
  status: oneOf(NODE_STATUSES).optional(),
  // The node's limits, checked as on create and PATCH; a password is hashed before it is stored.
  expires_at: nodeLimitFields.expires_at,
  max_scans: nodeLimitFields.max_scans,
  after_limit: nodeLimitFields.after_limit,
  password: nodeLimitFields.password,
});
export type NodeImportRowT = z.infer<typeof NodeImportRow>;

/**
 * The row as the document shows it: every field a string (payload an object), nothing required,
 * since a row the checks refuse is reported, not a 422 of the whole request, under ?mode=partial.
 */
const NodeImportRowDoc = z
  .object({
    slug: z.string().nullable().optional().meta({ description: 'Updates the node with this slug (in this organization) instead of creating one.' }),
    serial: z.string().nullable().optional().meta({ description: 'Updates the node with this serial (a batch node, e.g. FAIR-001).' }),
    label: z.string().optional().meta({ description: 'Required to create.' }),
    function_type: z.string().optional().meta({ description: `Required to create: one of ${FUNCTION_TYPES.join(', ')}.` }),
    payload: z.record(z.string(), z.unknown()).optional().meta({ description: 'Required to create: the *Payload of function_type (any part of it with template_id). On an update it replaces the stored payload.' }),
    template_id: z.string().nullable().optional().meta({ description: 'On create only: binds the node to a template. An update must leave it as it is.' }),
    status: z.string().optional().meta({ description: `One of ${NODE_STATUSES.join(', ')}: a create takes active (default) or draft, an update a new status of active, paused or retired (or the node's own).` }),
    expires_at: z.string().nullable().optional().meta({ description: 'RFC 3339 date-time with a zone: from then on a scan gets after_limit (docs/api.md "Node limits").' }),
    max_scans: z.union([z.number(), z.string()]).nullable().optional().meta({ description: 'Counted scans the node serves (1…1000000000); a CSV cell holds the number.' }),
    after_limit: z.unknown().optional().meta({ description: 'An AfterLimit ({"type":"gone"} or {"type":"redirect","url":…}); a CSV cell holds it as JSON.' }),
    password: z.string().nullable().optional().meta({ description: 'Import only: sets the password (4…200 characters), stored as a scrypt hash. The export never writes one.', writeOnly: true }),
  })
  .meta({ id: 'NodeImportRow' });

/** What the server parses: the rows themselves are checked one by one (NodeImporter). */
export const ImportNodesBody = z.strictObject({
  nodes: z
    .array(z.record(z.string(), z.unknown(), { error: 'must be an object' }), { error: 'must be an array of rows' })
    .min(1, 'must have at least one row')
    .max(IMPORT_MAX_ROWS, `must have at most ${IMPORT_MAX_ROWS} rows (send more in several calls)`),
});
export type ImportNodesBodyT = z.infer<typeof ImportNodesBody>;

export const ImportNodesRequest = z
  .strictObject({ nodes: z.array(NodeImportRowDoc).min(1).max(IMPORT_MAX_ROWS) })
  .meta({ id: 'ImportNodesBody', description: 'The rows to import; GET /v1/nodes/export?format=json writes this shape.' });

const booleanFlag = z
  .enum(['true', 'false'], { error: () => 'must be true or false' })
  .optional()
  .transform((v) => v === 'true');

export const ImportNodesQuery = z.strictObject({
  mode: oneOf(['all', 'partial'] as const)
    .optional()
    .meta({ description: 'all (default): every row is valid or nothing is written (422 naming each bad row). partial: the valid rows are written, the others reported.' }),
  dry_run: booleanFlag.meta({ description: 'true: check every row and answer the report without writing anything.' }),
});

export const ImportRowError = z
  .object({
    row: z.number().int().min(1).meta({ description: 'Row number, from 1: the JSON row, or the CSV row with content (the header, blank lines and lines of empty cells are not counted).' }),
    field: z.string().meta({ description: 'The column (`payload.url`, `label` …), or `row` for the row as a whole.' }),
    message: z.string(),
  })
  .meta({ id: 'ImportRowError' });
export type ImportRowErrorT = z.infer<typeof ImportRowError>;

export const IMPORT_ACTIONS = ['created', 'updated', 'unchanged', 'failed'] as const;

export const ImportReport = z
  .object({
    mode: z.enum(['all', 'partial']),
    dry_run: z.boolean().meta({ description: 'true: nothing was written; the counts say what an import would do.' }),
    created: z.number().int().min(0),
    updated: z.number().int().min(0),
    unchanged: z.number().int().min(0).meta({ description: 'Rows naming a node they would not change (nothing written, no event).' }),
    failed: z.number().int().min(0),
    errors: z.array(ImportRowError),
    rows: z
      .array(z.object({ row: z.number().int().min(1), action: z.enum(IMPORT_ACTIONS), slug: z.string().nullable() }))
      .meta({ description: "Each row's outcome; slug is the node's (null for a failed row that named none)." }),
  })
  .meta({ id: 'ImportReport' });
export type ImportReportT = z.infer<typeof ImportReport>;

export const ExportNodesQuery = z.strictObject({
  format: oneOf(['csv', 'json'] as const).optional().meta({ description: 'csv (default) or json.' }),
});

/** One exported node: the columns an import reads, so that an export imports unchanged. */
export const NodeExportRow = z
  .object({
    slug: z.string(),
    serial: z.string().nullable(),
    label: z.string(),
    function_type: functionType,
    status: oneOf(NODE_STATUSES),
    template_id: z.string().nullable(),
    payload: z.record(z.string(), z.unknown()),
    expires_at: timestamp.nullable(),
    max_scans: z.number().int().nullable(),
    after_limit: AfterLimit.nullable().meta({ description: 'null: the default, the 410 page ({"type":"gone"}).' }),
  })
  .meta({ id: 'NodeExportRow', description: 'A node as the import reads it. Never its password: a password-protected node imports without one (set it again, or use waymark export for a whole organization, which carries the hash).' });
export type NodeExportRowT = z.infer<typeof NodeExportRow>;

export const NodesExport = z.object({ nodes: z.array(NodeExportRow) }).meta({ id: 'NodesExport' });
