/**
 * Shapes of the local NFC API (/v1/nfc/…): request bodies (validated) and replies/events
 * (documented; the console types itself from these). See docs/nfc.md.
 */
import { z } from 'zod';
import { allowLocalScanBaseBody } from './organization.ts';
import { oneOf } from './common.ts';

export const READER_STATES = ['starting', 'unavailable', 'no_daemon', 'no_reader', 'ready', 'card_present'] as const;
/** Why an NFC operation failed: the one list of codes, used by the tag programmer and the API. */
export const NfcErrorCode = oneOf([
  'unavailable', // nfc-pcsc not installed / cannot load
  'no_daemon', // pcscd not running
  'no_reader',
  'no_tag',
  'unsupported_card',
  'not_formatted',
  'too_small',
  'read_only',
  'tag_removed',
  'verify_failed',
  'lock_failed',
  'uid_bound',
  'already_written', // the tag is bound to another node and holds its URL: a finished tag
  'duplicate_url', // the tag holds the URL of a node bound to another tag
  'busy',
  'io_error',
  'wrong_key', // an NTAG 424 DNA keyed by someone else (or with another master key)
  'no_master_key', // an NTAG 424 DNA, and no organization master key to key it with
  'password_protected', // an NTAG21x protected with a password that is not ours
  'config_failed', // mirror or password configuration did not read back as written
]);
export type NfcErrorCodeT = z.infer<typeof NfcErrorCode>;
/**
 * What protects a written tag (docs/nfc.md, "Protection per tag"): nothing; NTAG 424 DNA secure
 * unique messages; or an NTAG21x's UID + counter mirror, its password, or both.
 */
export const TAG_PROTECTIONS = ['none', 'ntag424_sun', 'ntag21x_mirror', 'ntag21x_password', 'ntag21x_mirror_password'] as const;
export type TagProtection = (typeof TAG_PROTECTIONS)[number];

const serial = z.string().min(1).max(100);

/** Locking is irreversible: `lock: true` needs `confirm_lock: true` beside it. */
const lockFields = {
  /** Lock the tag permanently after verifying it (irreversible). */
  lock: z.boolean().optional(),
  /** Must be true when `lock` is: the operator confirmed that locking cannot be undone. */
  confirm_lock: z.boolean().optional(),
};
/** NTAG213/215/216 tap evidence and protection (docs/nfc.md, "NTAG21x evidence and passwords"). */
const ntag21xFields = {
  /** Mirror the tag's UID and NFC counter into its URL (`&m=UIDxCOUNTER`): evidence of a tap, checked at scan time. */
  mirror: z.boolean().optional(),
  /** Protect each tag with its own password (derived from the organization's tag master key) so it cannot be rewritten in the field. */
  protect: z.boolean().optional(),
};
const LOCK_CONFIRM = 'Locking a tag is permanent: set confirm_lock to true to confirm';
function lockConfirmed(body: { lock?: boolean | undefined; confirm_lock?: boolean | undefined }): boolean {
  return body.lock !== true || body.confirm_lock === true;
}

export const StartSessionBody = z
  .strictObject({
    batch_id: z.string().min(1).max(100),
    ...lockFields,
    ...ntag21xFields,
    /** Take over tags already bound to other nodes without asking. */
    allow_reassign: z.boolean().optional(),
    allow_local_scan_base: allowLocalScanBaseBody,
  })
  .refine(lockConfirmed, { message: LOCK_CONFIRM, path: ['confirm_lock'] })
  .meta({ id: 'StartNfcSessionBody' });

export const SerialBody = z.strictObject({ serial: serial.optional() }).meta({ id: 'NfcSerialBody' });
export const RetryBody = z.strictObject({ reassign: z.boolean().optional() }).meta({ id: 'NfcRetryBody' });

export const WriteNodeBody = z
  .strictObject({
    slug: z.string().min(1).max(100),
    ...lockFields,
    ...ntag21xFields,
    reassign: z.boolean().optional(),
    allow_local_scan_base: allowLocalScanBaseBody,
    /** How long to wait for a tag when none is on the reader (ms). */
    timeout_ms: z.number().int().min(1000).max(120_000).optional(),
  })
  .refine(lockConfirmed, { message: LOCK_CONFIRM, path: ['confirm_lock'] })
  .meta({ id: 'NfcWriteNodeBody' });

export const TagInfoSchema = z.object({
  uid: z.string(),
  atr: z.string(),
  supported: z.boolean(),
  refusal: z.object({ code: NfcErrorCode, message: z.string() }).optional(),
  type: z.string().optional(),
  dataAreaBytes: z.number().optional(),
  readOnly: z.boolean().optional(),
  content: z
    .discriminatedUnion('kind', [z.object({ kind: z.literal('blank') }), z.object({ kind: z.literal('uri'), url: z.string() }), z.object({ kind: z.literal('other') })])
    .optional(),
  /** NTAG 424 DNA: secure unique messages already on, and key 0's version then (null when off). */
  ntag424: z.object({ sdm: z.boolean(), keyVersion: z.number().nullable() }).optional(),
});

export const ReaderStatusSchema = z
  .object({
    state: oneOf(READER_STATES),
    /** The state in plain words (no module names or paths: those are in the server log). */
    message: z.string(),
    /** What to do about it, in plain words; null when nothing needs doing. */
    fix: z.string().nullable(),
    readers: z.array(z.string()),
    cards: z.array(z.object({ reader: z.string(), info: TagInfoSchema })),
    generation: z.number(),
  })
  .meta({ id: 'NfcReaderStatus' });

const NodeBriefSchema = z
  .object({ slug: z.string(), serial: z.string().nullable(), label: z.string(), status: z.string(), hardware_id: z.string().nullable() })
  .meta({ id: 'NfcNodeBrief' });

export const RefusalSchema = z
  .object({
    code: NfcErrorCode,
    message: z.string(),
    uid: z.string().optional(),
    serial: z.string().nullable().optional(),
    slug: z.string().optional(),
    bound_to: z.object({ slug: z.string(), serial: z.string().nullable(), label: z.string() }).optional(),
    holds: NodeBriefSchema.optional(),
  })
  .meta({ id: 'NfcRefusal' });

/** Check mode: what protects the tag on the reader and whether it checks for this organization. */
export const TagProtectionReadingSchema = z
  .object({
    /** `ntag424_sun`: an NTAG 424 DNA (SDM on or not); `ntag21x`: an NTAG213/215/216; `none`: any other tag. */
    kind: oneOf(['none', 'ntag424_sun', 'ntag21x'] as const),
    /** The 424's SUN message or the 21x's UID + counter mirror is on (in the URL read). */
    mirror: z.boolean(),
    /** 424: the mirror verifies with this organization's keys; 21x: the mirrored UID is this tag's. Null: nothing to check. */
    verifies: z.boolean().nullable(),
    /** 424: the master key version that verifies its mirror (else key 0's version read from the tag); null for others. */
    key_version: z.number().nullable(),
    /** 424: a newer master key version exists: writing the tag again re-keys it. */
    rekey_due: z.boolean(),
    /** The tap counter mirrored in this reading (424 SDMReadCtr, 21x NFC counter). */
    counter: z.number().nullable(),
    /** 21x: protected with this organization's password according to its last write here; null: never written here (unknown). */
    password: z.boolean().nullable(),
    message: z.string(),
  })
  .meta({ id: 'NfcTagProtectionReading' });

export const TagReadingSchema = z
  .object({
    reader: z.string(),
    uid: z.string(),
    type: z.string().nullable(),
    data_area_bytes: z.number().nullable(),
    content: oneOf(['blank', 'node', 'other_url', 'other_data', 'unsupported'] as const),
    url: z.string().nullable(),
    node: NodeBriefSchema.nullable(),
    bound_to: NodeBriefSchema.nullable(),
    message: z.string(),
    warning: z.string().nullable(),
    /** Null for a card that cannot be used. */
    protection: TagProtectionReadingSchema.nullable(),
  })
  .meta({ id: 'NfcTagReading' });

export const SessionSchema = z
  .object({
    id: z.string(),
    batch_id: z.string(),
    batch_label: z.string(),
    status: oneOf(['active', 'stopped', 'completed'] as const),
    lock_tags: z.boolean(),
    mirror_tags: z.boolean(),
    protect_tags: z.boolean(),
    allow_reassign: z.boolean(),
    next: z
      .object({ serial: z.string().nullable(), slug: z.string(), node_id: z.string(), url: z.string(), revisit: z.boolean() })
      .nullable(),
    counts: z.object({ total: z.number(), written: z.number(), pending: z.number(), skipped: z.number(), lost: z.number() }),
    last_refusal: RefusalSchema.nullable(),
    recent: z.array(
      z.object({ serial: z.string().nullable(), slug: z.string(), hardware_id: z.string(), protection: oneOf(TAG_PROTECTIONS), written_at: z.string() }),
    ),
    started_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'NfcSession' });

export const TagWrittenSchema = z
  .object({
    node: z.record(z.string(), z.unknown()),
    serial: z.string().nullable(),
    slug: z.string(),
    hardware_id: z.string(),
    tag_type: z.string(),
    url: z.string(),
    locked: z.boolean(),
    /** The URL carries the UID + counter mirror. */
    mirror: z.boolean(),
    /** The tag is protected with its password. */
    protected: z.boolean(),
    reassigned_from: z.string().nullable(),
    session_id: z.string().nullable(),
    apdus: z.number(),
    recognised: z.boolean(),
    /** ntag424_sun: an NTAG 424 DNA personalised with per-tag keys; each tap's URL carries a proof. ntag21x_*: the mirror and/or the password. */
    protection: oneOf(TAG_PROTECTIONS),
    /** NTAG 424 DNA: the organization master key version its keys come from; else null. */
    key_version: z.number().nullable(),
    ms: z.number(),
    written_at: z.string(),
  })
  .meta({ id: 'NfcTagWritten' });

export const NfcStatusSchema = z
  .object({ reader: ReaderStatusSchema, session: SessionSchema.nullable() })
  .meta({ id: 'NfcStatus' });

export type ReaderStatusT = z.infer<typeof ReaderStatusSchema>;
export type NfcSessionT = z.infer<typeof SessionSchema>;
export type NfcRefusalT = z.infer<typeof RefusalSchema>;
export type NfcTagWrittenT = z.infer<typeof TagWrittenSchema>;
export type NfcTagReadingT = z.infer<typeof TagReadingSchema>;
export type NfcTagProtectionReadingT = z.infer<typeof TagProtectionReadingSchema>;
/** Server-sent events on /v1/nfc/events: `event: <type>` + `data: <json>`. */
export type NfcEventT =
  | { type: 'reader'; data: ReaderStatusT }
  | { type: 'tag'; data: { reader: string; info: z.infer<typeof TagInfoSchema> } }
  | { type: 'tag.off'; data: { reader: string; uid: string | null } }
  | { type: 'tag.written'; data: NfcTagWrittenT }
  | { type: 'tag.refused'; data: NfcRefusalT }
  | { type: 'tag.read'; data: NfcTagReadingT }
  | { type: 'session'; data: NfcSessionT | null };
