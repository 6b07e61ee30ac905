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
});

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
    pending_changes: z.number().int().meta({ description: 'Always 0 until push exists (docs/sync.md).' }),
    conflicts: z.array(SyncConflict).meta({ description: 'Only block conflicts found at pairing for now.' }),
  })
  .meta({ id: 'SyncStatus' });

export type SyncStatusT = z.infer<typeof SyncStatus>;
export type RegisterSiteInput = z.infer<typeof RegisterSiteBody>;
export type LeaseInput = z.infer<typeof LeaseBody>;
export type SiteRegisteredT = z.infer<typeof SiteRegistered>;
export type LeaseGrantedT = z.infer<typeof LeaseGranted>;
