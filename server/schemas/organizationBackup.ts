/**
 * The document `waymark export --org` writes and `waymark import --org` reads (docs/backup.md):
 * a whole organization, version 1. Built from the API's own schemas (create bodies, limits), so
 * an entity the API would refuse is refused here too; the services check the rest (payload
 * completeness, rule siblings, template locks) as they do for any write.
 */
import { z } from 'zod';
import { BATCH_STATUSES, NODE_STATUSES, functionType, oneOf, timestamp } from './common.ts';
import { AfterLimit, nodeLimitFields } from './nodes.ts';
import { payloadObject } from './payloads.ts';
import { CreateRuleBody } from './rules.ts';
import { CreateTemplateBody } from './templates.ts';
import { CreateWebhookBody } from './webhooks.ts';

export const BACKUP_FORMAT = 'waymark.organization';
export const BACKUP_VERSION = 1;

/** Only what says which document it is: read first, so another version gets a clear error. */
export const BackupHeader = z.object({
  format: z.literal(BACKUP_FORMAT, { error: `is not ${BACKUP_FORMAT} (a file written by waymark export --org)` }),
  version: z.number({ error: 'must be a number' }),
});

const id = z.string({ error: 'must be a string' }).min(1).max(100);
const times = { created_at: timestamp, updated_at: timestamp };

export const BackupTemplate = CreateTemplateBody.extend({ id, locked_fields: CreateTemplateBody.shape.locked_fields.unwrap(), ...times });

export const BackupBatch = z.strictObject({
  id,
  label: z.string().max(200),
  prefix: z.string().max(100),
  quantity: z.number().int().min(1),
  serial_start: z.number().int().min(0),
  serials_provisional: z.boolean(),
  function_type: functionType,
  base_payload: payloadObject.nullable(),
  template_id: id.nullable(),
  status: oneOf(BATCH_STATUSES),
  failure_reason: z.string().nullable(),
  nodes_generated: z.number().int().min(0),
  ...times,
});

/** A webhook endpoint without its secret: the import makes a new one (docs/backup.md). */
export const BackupWebhook = CreateWebhookBody.extend({ id, description: CreateWebhookBody.shape.description.unwrap(), active: z.boolean(), ...times });

export const BackupRule = CreateRuleBody.extend({ id, priority: z.number().int().min(0).max(1_000_000), enabled: z.boolean(), ...times });

export const BackupNode = z.strictObject({
  id,
  slug: z.string().min(1).max(100),
  label: z.string().max(200),
  function_type: functionType,
  payload: payloadObject,
  status: oneOf(NODE_STATUSES),
  hardware_id: z.string().max(200).nullable(),
  /** Carried so that max_scans goes on counting where it was. */
  scan_count: z.number().int().min(0),
  template_id: id.nullable(),
  batch_id: id.nullable(),
  serial: z.string().max(100).nullable(),
  serial_number: z.number().int().nullable(),
  expires_at: nodeLimitFields.expires_at.unwrap().unwrap().nullable(),
  max_scans: nodeLimitFields.max_scans.unwrap().unwrap().nullable(),
  /** The stored scrypt hash, never a clear-text password. */
  password_hash: z.string().regex(/^scrypt\$/, 'must be a scrypt hash as waymark export writes it').max(500).nullable(),
  after_limit: AfterLimit.nullable(),
  ...times,
  rules: z.array(BackupRule),
});

export const OrganizationBackup = z.strictObject({
  format: z.literal(BACKUP_FORMAT),
  version: z.literal(BACKUP_VERSION),
  exported_at: timestamp,
  organization: z.strictObject({ id, name: z.string() }),
  /** What the document leaves out on purpose, for the person importing it. */
  omitted: z.array(z.string()),
  templates: z.array(BackupTemplate),
  batches: z.array(BackupBatch),
  webhooks: z.array(BackupWebhook),
  nodes: z.array(BackupNode),
});

export type OrganizationBackupT = z.infer<typeof OrganizationBackup>;
export type BackupNodeT = z.infer<typeof BackupNode>;
export type BackupRuleT = z.infer<typeof BackupRule>;
export type BackupTemplateT = z.infer<typeof BackupTemplate>;
export type BackupBatchT = z.infer<typeof BackupBatch>;
export type BackupWebhookT = z.infer<typeof BackupWebhook>;

/** Said in the document and by the CLI: the importer sets these again. */
export const BACKUP_OMITTED = [
  'webhooks[].secret: each imported endpoint gets a new signing secret, printed once by waymark import; give it to the receiver',
  'scans and analytics: a node keeps its scan_count (so max_scans goes on counting) but not its scan history',
  'API keys, organization settings, sync pairing, webhook deliveries and print jobs',
];
