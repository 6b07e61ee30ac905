import { z } from 'zod';

/**
 * Sync wire format (first slice: pairing and slug leases; docs/sync.md). Site → remote calls
 * carry the fencing pair `token` (the last one the remote accepted, null on the first call of an
 * incarnation) and `next_token` (chosen by the site and stored before the call): a retried call
 * reuses its next_token and gets the same answer; a stale token means a forked copy of the data.
 */
const id = z.string().regex(/^[A-Za-z0-9_-]{8,64}$/, 'must be 8 to 64 letters, digits, _ or -');
const token = id;
const block = z.number({ error: 'must be a number' }).int('must be a whole number').min(0, 'must be at least 0').max(2 ** 24 - 1, 'must be at most 16777215');

/** The text of the 409 a remote answers when a call presents a stale fencing token. */
export const FORKED_ERROR = 'Incarnation forked: another copy of this site\'s data has talked to the remote since';
/** The 409 for a lease call from a site or incarnation the remote has no record of (e.g. a remote restored from a backup). */
export const UNKNOWN_INCARNATION_ERROR = 'Unknown site incarnation: register a new incarnation';

export const RegisterSiteBody = z
  .strictObject({
    site_id: id,
    incarnation: id,
    name: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
    token: token.nullable(),
    next_token: token,
    claims: z.array(block, { error: 'must be an array' }).max(256, 'must have at most 256 blocks').meta({ description: 'Blocks this instance took itself before it was paired.' }),
  })
  .meta({ id: 'RegisterSiteBody' });

export const BlockRejection = z.object({
  block: z.number().int(),
  reason: z.enum(['held_by_other_site', 'held_by_other_incarnation', 'held_by_remote']),
});

export const SiteRegistered = z
  .object({
    site_id: z.string(),
    incarnation: z.string(),
    org: z.object({ id: z.string(), name: z.string() }),
    token: z.string(),
    claims: z.object({ accepted: z.array(z.number().int()), rejected: z.array(BlockRejection) }),
  })
  .meta({ id: 'SiteRegistered' });

export const LeaseBody = z
  .strictObject({
    site_id: id,
    incarnation: id,
    token: token.nullable(),
    next_token: token,
    want: z
      .number({ error: 'must be a number' })
      .int('must be a whole number')
      .min(0, 'must be at least 0')
      .max(8, 'must be at most 8')
      .meta({ description: '0 renews the fencing token only: the heartbeat that also detects a forked copy early.' }),
  })
  .meta({ id: 'LeaseBody' });

export const LeaseGranted = z
  .object({
    token: z.string(),
    blocks: z.array(z.number().int()).meta({ description: 'Blocks granted by this call (the same ones again on a retry).' }),
  })
  .meta({ id: 'LeaseGranted' });

export const SerialsBody = z
  .strictObject({
    prefix: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'must be 1 to 32 letters, digits, _ or -'),
    quantity: z.number({ error: 'must be a number' }).int('must be a whole number').min(1, 'must be at least 1').max(500, 'must be at most 500'),
  })
  .meta({ id: 'SerialsBody' });

export const SerialsGranted = z
  .object({ serial_start: z.number().int().meta({ description: 'The first of `quantity` serial numbers reserved for the prefix in the organization.' }) })
  .meta({ id: 'SerialsGranted' });

export type SerialsInput = z.infer<typeof SerialsBody>;
export type SerialsGrantedT = z.infer<typeof SerialsGranted>;

export const VerifySlugsBody = z
  .strictObject({
    site_id: id,
    slugs: z
      .array(z.string({ error: 'must be a string' }).max(100, 'must be at most 100 characters'), { error: 'must be an array' })
      .min(1, 'must have at least 1 slug')
      .max(500, 'must have at most 500 slugs'),
  })
  .meta({ id: 'VerifySlugsBody' });

export const SLUG_REJECTIONS = ['malformed', 'not_leased', 'leased_to_other_site'] as const;

export const SlugsVerified = z
  .object({
    accepted: z.array(z.string()),
    rejected: z.array(z.object({ slug: z.string(), reason: z.enum(SLUG_REJECTIONS) })),
  })
  .meta({ id: 'SlugsVerified' });

export const SiteSummary = z
  .object({
    site_id: z.string(),
    name: z.string(),
    created_at: z.string(),
    last_seen_at: z.string(),
    incarnations: z.array(z.object({ incarnation: z.string(), created_at: z.string(), last_seen_at: z.string(), blocks: z.number().int() })),
  })
  .meta({ id: 'SyncSite' });

export const SyncConflict = z.object({
  id: z.number().int(),
  kind: z.string(),
  detail: z.record(z.string(), z.unknown()),
  detected_at: z.string(),
  resolved_at: z.string().nullable(),
}).meta({ id: 'SyncConflict' });

export const SyncStatus = z
  .object({
    mode: z.enum(['standalone', 'site']).meta({ description: 'site: paired (or pairing) with a remote; slugs come only from its leases.' }),
    remote: z.string().nullable(),
    paired: z.boolean().meta({ description: 'The remote has registered this incarnation.' }),
    remote_org: z.object({ id: z.string(), name: z.string() }).nullable(),
    site_id: z.string(),
    incarnation: z.string(),
    online: z.boolean().nullable().meta({ description: 'Outcome of the last call to the remote; null before the first.' }),
    last_attempt_at: z.string().nullable(),
    last_success_at: z.string().nullable(),
    last_error: z.string().nullable(),
    next_attempt_at: z.string().nullable(),
    reserve: z.object({
      slugs_left: z.number().int(),
      blocks: z.number().int(),
      target_blocks: z.number().int(),
    }),
    pending_changes: z.number().int().meta({ description: 'Local changes not yet acknowledged by the remote.' }),
    conflicts: z.array(SyncConflict).meta({ description: 'Conflicts not yet marked resolved (GET /v1/sync/conflicts lists all).' }),
  })
  .meta({ id: 'SyncStatus' });

export type SyncStatusT = z.infer<typeof SyncStatus>;
export type RegisterSiteInput = z.infer<typeof RegisterSiteBody>;
export type LeaseInput = z.infer<typeof LeaseBody>;
export type SiteRegisteredT = z.infer<typeof SiteRegistered>;
export type LeaseGrantedT = z.infer<typeof LeaseGranted>;

// ---- push and pull (docs/sync.md, "Protocol reference") ----

/** `organization`: an organization's settings (its scan domain, its QR style and logo); its entity_id is mapped to each side's own organization. */
export const SYNC_ENTITIES = ['node', 'rule', 'template', 'webhook', 'batch', 'api_key', 'organization'] as const;
export type SyncEntity = (typeof SYNC_ENTITIES)[number];
const hlc = z.string({ error: 'must be a string' }).regex(/^[0-9a-f]{16}$/, 'must be 16 lowercase hex digits');
const fieldValue = z.union([z.string().max(1_000_000), z.number(), z.null()]);

export const SyncChange = z
  .strictObject({
    seq: z.number().int().min(1).meta({ description: 'Push: the site\'s outbox seq (increasing). Pull: the feed position.' }),
    entity: z.enum(SYNC_ENTITIES),
    entity_id: z.string().min(1).max(100),
    op: z.enum(['upsert', 'delete']),
    fields: z.record(z.string().max(64), fieldValue).meta({ description: 'All fields on creation, the changed ones on an edit.' }),
    hlc,
    writer: z.string().min(1).max(200).meta({ description: 'site_id/incarnation of the instance that made the change.' }),
    group: z.string().max(64).nullable().meta({ description: 'Changes of one transaction share a group and travel in one request.' }),
  })
  .meta({ id: 'SyncChange' });

export const SyncScan = z
  .strictObject({
    id: z.string().min(1).max(200).meta({ description: 'Global scan id "<writer>:<local id>": a scan is stored once however often it is pushed.' }),
    node_id: z.string().min(1).max(100),
    ts: z.number().int(),
    device_type: z.string().max(32),
    os: z.string().max(32),
    browser: z.string().max(64).nullable(),
    country: z.string().max(8).nullable(),
    source: z.string().max(16),
    rule_id: z.string().max(100).nullable(),
    outcome: z.string().max(32),
    is_bot: z.number().int().min(0).max(1),
    visitor_hash: z.string().max(128),
  })
  .meta({ id: 'SyncScan' });

export const PushBody = z
  .strictObject({
    site_id: id,
    incarnation: id,
    token: token.nullable(),
    next_token: token,
    after_seq: z.number().int().min(0).meta({ description: 'The last seq this site believes the remote has acknowledged.' }),
    changes: z.array(SyncChange).max(20_000),
    scans: z.array(SyncScan).max(20_000),
  })
  .meta({ id: 'PushBody' });

export const SCAN_REFUSALS = ['node_of_another_organization', 'unknown_node'] as const;

export const ScanRefusal = z
  .object({
    id: z.string(),
    node_id: z.string(),
    reason: z.enum(SCAN_REFUSALS).meta({
      description: 'node_of_another_organization: the node belongs to another organization here; unknown_node: the remote does not have it (deleted here, or its creation was refused).',
    }),
  })
  .meta({ id: 'SyncScanRefusal' });
export type ScanRefusalT = z.infer<typeof ScanRefusal>;

export const PushResult = z
  .object({
    token: z.string(),
    acked_seq: z.number().int().meta({ description: 'Every change up to this seq is applied (or logged as a conflict).' }),
    scans_acked: z.number().int().meta({ description: 'How many scans of the request are stored (new or already there); refused ones are not counted.' }),
    scans_refused: z.array(ScanRefusal).meta({ description: 'Scans of the request that are not stored, and why. The site does not send them again.' }),
  })
  .meta({ id: 'PushResult' });

export const ChangesQuery = z.strictObject({
  cursor: z.string().max(500).optional(),
  limit: z.coerce.number().int().min(1).max(5000).default(1000),
  site_id: id,
  incarnation: id,
});

/** A conflict the remote found in the asking site's pushes, sent down so the site's console shows it. */
export const RemoteConflict = z.object({
  id: z.number().int(),
  kind: z.string(),
  detail: z.record(z.string(), z.unknown()),
  detected_at: z.string(),
}).meta({ id: 'SyncRemoteConflict' });

export const ChangesPage = z
  .object({
    changes: z.array(SyncChange),
    conflicts: z.array(RemoteConflict).meta({ description: 'Conflicts found at the remote in this site\'s pushes since the cursor.' }),
    next_cursor: z.string().meta({ description: 'Opaque; pass it back as cursor.' }),
    more: z.boolean(),
  })
  .meta({ id: 'SyncChangesPage' });

/** The 409 a push gets when changes are missing before it: resend from expected_seq + 1. */
export const PUSH_GAP_ERROR = 'Push gap: changes are missing before this request';

export type SyncChangeT = z.infer<typeof SyncChange>;
export type SyncScanT = z.infer<typeof SyncScan>;
export type PushInput = z.infer<typeof PushBody>;
export type PushResultT = z.infer<typeof PushResult>;
export type ChangesPageT = z.infer<typeof ChangesPage>;
