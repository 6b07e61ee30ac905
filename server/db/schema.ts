/**
 * The tables as Kysely sees them: one type for both dialects (server/db/store.ts). First generated
 * by kysely-codegen from the SQLite schema, then kept by hand: a migration that adds or changes a
 * column updates both dialects' migration files and this file in the same commit.
 *
 * Same model on both backends: timestamps are ISO-8601 TEXT (string order is time order), JSON is
 * TEXT, flags are INTEGER 0/1, and 64-bit integers come back as numbers (postgresStore parses
 * int8 values; every id and counter stays far below 2^53).
 */
import type { ColumnType } from "kysely";

export type Generated<T> = T extends ColumnType<infer S, infer I, infer U>
  ? ColumnType<S, I | undefined, U>
  : ColumnType<T, T | undefined, T>;

export interface ApiKeys {
  /** Insertion order (SQLite's implicit rowid; an identity column on PostgreSQL): orders rows created within one millisecond. */
  rowid: Generated<number>;
  /** 1: an instance-admin key (migration 002). */
  admin: Generated<number>;
  created_at: string;
  id: string;
  key_hash: string;
  last_used_at: string | null;
  limits_json: string | null;
  name: string;
  org_id: string;
  plan: string;
  prefix: string;
  revoked_at: string | null;
}

export interface Batches {
  /** Insertion order (SQLite's implicit rowid; an identity column on PostgreSQL): orders rows created within one millisecond. */
  rowid: Generated<number>;
  base_payload_json: string | null;
  created_at: string;
  failure_reason: string | null;
  function_type: string;
  id: string;
  label: string;
  /** The process generating the batch (migration 064), until lease_until. */
  lease_owner: string | null;
  lease_until: string | null;
  nodes_generated: Generated<number>;
  org_id: string;
  prefix: string;
  quantity: number;
  serial_start: number;
  /** 1: numbered by a paired site that could not reach its remote (migration 068). */
  serials_provisional: Generated<number>;
  status: string;
  template_id: string | null;
  updated_at: string;
}

export interface NfcSessionItems {
  attempts: Generated<number>;
  last_error: string | null;
  node_id: string;
  serial_number: number;
  session_id: string;
  state: string;
  uid: string | null;
  updated_at: string;
}

export interface NfcSessions {
  /** Insertion order (SQLite's implicit rowid; an identity column on PostgreSQL): orders rows created within one millisecond. */
  rowid: Generated<number>;
  allow_reassign: Generated<number>;
  batch_id: string;
  ended_at: string | null;
  id: string;
  lock_tags: Generated<number>;
  mirror_tags: Generated<number>;
  org_id: string;
  protect_tags: Generated<number>;
  started_at: string;
  status: string;
  updated_at: string;
}

export interface NfcWrites {
  locked: number;
  mirror: Generated<number>;
  node_id: string;
  org_id: string;
  /** The NTAG21x password master key version a protected tag was written with (null: not protected, or before versions: 1). */
  password_version: number | null;
  protected: Generated<number>;
  seq: Generated<number>;
  session_id: string | null;
  tag_type: string;
  uid: string;
  url: string;
  written_at: string;
}

export interface Nodes {
  /** Insertion order (SQLite's implicit rowid; an identity column on PostgreSQL): orders rows created within one millisecond. */
  rowid: Generated<number>;
  batch_id: string | null;
  after_limit_json: string | null;
  created_at: string;
  expires_at: string | null;
  function_type: string;
  hardware_id: string | null;
  id: string;
  label: string;
  max_scans: number | null;
  org_id: string;
  password_hash: string | null;
  payload_json: string;
  scan_count: Generated<number>;
  serial: string | null;
  serial_number: number | null;
  slug: string;
  status: string;
  template_id: string | null;
  updated_at: string;
}

export interface Organizations {
  /** Insertion order (SQLite's implicit rowid; an identity column on PostgreSQL): orders rows created within one millisecond. */
  rowid: Generated<number>;
  created_at: string;
  id: string;
  name: string;
}

/** An organization's settings (migration 066); id = org_id = the organization's id. */
export interface OrganizationSettings {
  id: string;
  org_id: string;
  /** The scan domain printed on labels and written on tags; null = the instance default. */
  scan_base: string | null;
  /** The default QR style as JSON (QrStyleRepo); null = the built-in style. Synced (migration 086). */
  qr_style_json: string | null;
  /** The logo as JSON, its PNG base64 as the server re-encoded it (QrStyleRepo); null = none. Synced. */
  qr_logo_json: string | null;
  updated_at: string;
}

export interface OutboxEvents {
  created_at: string;
  data_json: string;
  id: string;
  org_id: string;
  seq: Generated<number>;
  type: string;
}

export interface PrinterProfiles {
  /** Insertion order (SQLite's implicit rowid; an identity column on PostgreSQL): orders rows created within one millisecond. */
  rowid: Generated<number>;
  created_at: string;
  id: string;
  layout: string | null;
  name: string;
  offset_x: Generated<number>;
  offset_y: Generated<number>;
  org_id: string;
  updated_at: string;
}

export interface PasswordAttempts {
  attempts: number;
  key: string;
  window_from: number;
}

/** An organization's default QR code style and logo (migration 077). */
export interface RateLimitWindows {
  batch: number;
  burst: number;
  key_id: string;
  minute: number;
  second: number;
  standard: number;
}

export interface Rules {
  /** Insertion order (SQLite's implicit rowid; an identity column on PostgreSQL): orders rows created within one millisecond. */
  rowid: Generated<number>;
  conditions_json: string;
  created_at: string;
  enabled: Generated<number>;
  function_type: string;
  id: string;
  node_id: string;
  payload_json: string;
  priority: Generated<number>;
  rule_type: string;
  updated_at: string;
}

export interface ScanCacheEpoch {
  epoch: number;
  id: Generated<number>;
}

export interface ScanEvents {
  browser: string | null;
  country: string | null;
  device_type: string;
  id: Generated<number>;
  is_bot: Generated<number>;
  node_id: string;
  org_id: string;
  os: string;
  outcome: string;
  rule_id: string | null;
  source: string;
  sync_id: string | null;
  ts: number;
  visitor_hash: string;
}

export interface ScanEventsByNode {
  id: number;
  node_id: string;
  ts: number;
}

export interface ScanOrgVisitorDays {
  day: number;
  org_id: string;
  visitor_hash: string;
}

export interface ScanRuleVisitorHours {
  hour: number;
  node_id: string;
  rule_key: string;
  visitor_hash: string;
}

export interface ScanRollups {
  dim: string;
  hour: number;
  node_id: string;
  org_id: string;
  scans: number;
  value: string;
}

/** Migration 071: scan_rollups summed per organization (organization analytics). */
export interface ScanOrgRollups {
  dim: string;
  hour: number;
  org_id: string;
  scans: number;
  value: string;
}

/** Migration 087: scan_org_rollups summed per day (organization analytics in whole days). */
export interface ScanOrgDayRollups {
  day: number;
  dim: string;
  org_id: string;
  scans: number;
  value: string;
}

/** Migration 071: a node's human scans per day, keyed by organization (top nodes, nodes scanned). */
export interface ScanNodeDays {
  day: number;
  node_id: string;
  org_id: string;
  scans: number;
  /** Distinct visitor keys of the day (migration 081). */
  visitors: Generated<number>;
}

/** An organization's distinct visitor keys per day (migration 081). */
/** Nodes per (organization, status, function type), kept by triggers (migration 080; deltas on PostgreSQL). */
export interface NodeCounts {
  function_type: string;
  nodes: number;
  org_id: string;
  status: string;
}

export interface ScanOrgDays {
  day: number;
  org_id: string;
  visitors: number;
}

export interface ScanRollupState {
  id: Generated<number>;
  last_event: number;
}

export interface ScanSalt {
  day: string;
  id: Generated<number>;
  salt: string;
}

export interface ScanVisitorDays {
  day: number;
  node_id: string;
  visitor_hash: string;
}

export interface ScanVisitorHours {
  hour: number;
  node_id: string;
  org_id: string;
  visitor_hash: string;
}

export interface SchemaMigrations {
  applied_at: string;
  name: string;
}

export interface SerialCounters {
  next_number: number;
  org_id: string;
  prefix: string;
}

export interface Settings {
  key: string;
  value: string;
}

export interface SlugBlocks {
  acquired_at: string;
  block: Generated<number>;
  next_offset: Generated<number>;
  source: string;
}

export interface Slugs {
  deleted_at: string | null;
  minted_at: string;
  node_id: string;
  org_id: string;
  slug: string;
}

export interface SyncConflicts {
  conflict_key: string | null;
  detail_json: string;
  detected_at: string;
  id: Generated<number>;
  kind: string;
  org_id: string | null;
  remote_id: number | null;
  remote_resolved_at: string | null;
  resolved_at: string | null;
}

export interface SyncIncarnations {
  created_at: string;
  incarnation: string;
  last_seen_at: string;
  site_id: string;
  token: string;
}

export interface SyncLeases {
  block: Generated<number>;
  grant_token: string;
  incarnation: string;
  kind: string;
  leased_at: string;
  org_id: string;
  site_id: string;
}

export interface SyncOutbox {
  entity: string;
  entity_id: string;
  fields: string;
  group_id: string | null;
  hlc: string;
  hold: string | null;
  op: string;
  org_id: string | null;
  pulled: Generated<number>;
  pushed: Generated<number>;
  seq: Generated<number>;
  writer: string;
}

export interface SyncPushState {
  incarnation: string;
  last_seq: number;
  site_id: string;
}

export interface SyncScanEpochs {
  first_id: Generated<number>;
  writer: string;
}

export interface SyncSiteBlocks {
  block: Generated<number>;
  incarnation: string;
  reason: string | null;
  state: string;
  updated_at: string;
  used: number | null;
}

export interface SyncSites {
  created_at: string;
  last_seen_at: string;
  name: string;
  org_id: string;
  site_id: string;
}

export interface SyncTombstones {
  entity: string;
  entity_id: string;
  hlc: string;
  parent_id: string | null;
  writer: string;
}

export interface SyncUnapplied {
  entity: string;
  entity_id: string;
  fields: string;
  hlc: string;
  writer: string;
}

export interface SyncVersions {
  entity: string;
  entity_id: string;
  field: string;
  hlc: string;
  writer: string;
}

export interface Templates {
  /** Insertion order (SQLite's implicit rowid; an identity column on PostgreSQL): orders rows created within one millisecond. */
  rowid: Generated<number>;
  created_at: string;
  function_type: string;
  id: string;
  locked_fields_json: Generated<string>;
  name: string;
  org_id: string;
  payload_json: string;
  updated_at: string;
}

export interface WebhookAttempts {
  attempt: number;
  delivery_id: string;
  duration_ms: number;
  error: string | null;
  id: Generated<number>;
  started_at: string;
  status_code: number | null;
  succeeded: number;
}

export interface WebhookClaims {
  claimed_until: string;
  owner: string;
  webhook_id: string;
}

export interface WebhookDeliveries {
  attempts: Generated<number>;
  completed_at: string | null;
  created_at: string;
  event_id: string;
  event_seq: number;
  event_type: string;
  id: string;
  last_attempt_at: string | null;
  last_error: string | null;
  last_status_code: number | null;
  next_attempt_at: string | null;
  round_attempts: Generated<number>;
  seq: Generated<number>;
  status: string;
  webhook_id: string;
}

export interface WebhookFanoutCursor {
  id: Generated<number>;
  last_seq: number;
}

export interface Webhooks {
  /** Insertion order (SQLite's implicit rowid; an identity column on PostgreSQL): orders rows created within one millisecond. */
  rowid: Generated<number>;
  active: Generated<number>;
  created_at: string;
  description: string | null;
  disabled_at: string | null;
  disabled_reason: string | null;
  events_json: string;
  failing_since: string | null;
  id: string;
  org_id: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  secret: string;
  start_seq: number;
  updated_at: string;
  url: string;
}

export interface TapProofTags {
  org_id: string;
  /** Upper-case hex. */
  uid: string;
  /** Tap proof kind (server/features/tapproofs/kinds/): ntag424. */
  kind: string;
  node_id: string;
  /** The organization master key version the tag's keys were diversified from (migration 074). */
  key_version: number;
  /** Highest read counter accepted; -1 = none yet. */
  last_counter: Generated<number>;
  created_at: string;
  updated_at: string;
}

export interface TapProofPolicies {
  node_id: string;
  org_id: string;
  /** serve | refuse */
  policy: string;
  updated_at: string;
}

export interface Schema {
  api_keys: ApiKeys;
  batches: Batches;
  nfc_session_items: NfcSessionItems;
  nfc_sessions: NfcSessions;
  nfc_writes: NfcWrites;
  nodes: Nodes;
  organizations: Organizations;
  organization_settings: OrganizationSettings;
  outbox_events: OutboxEvents;
  printer_profiles: PrinterProfiles;
  password_attempts: PasswordAttempts;
  rate_limit_windows: RateLimitWindows;
  rules: Rules;
  scan_cache_epoch: ScanCacheEpoch;
  scan_events: ScanEvents;
  tap_proof_policies: TapProofPolicies;
  tap_proof_tags: TapProofTags;
  scan_events_by_node: ScanEventsByNode;
  scan_org_visitor_days: ScanOrgVisitorDays;
  scan_rollup_state: ScanRollupState;
  node_counts: NodeCounts;
  scan_node_days: ScanNodeDays;
  scan_org_days: ScanOrgDays;
  scan_org_day_rollups: ScanOrgDayRollups;
  scan_org_rollups: ScanOrgRollups;
  scan_rollups: ScanRollups;
  scan_rule_visitor_hours: ScanRuleVisitorHours;
  scan_salt: ScanSalt;
  scan_visitor_days: ScanVisitorDays;
  scan_visitor_hours: ScanVisitorHours;
  schema_migrations: SchemaMigrations;
  serial_counters: SerialCounters;
  settings: Settings;
  slug_blocks: SlugBlocks;
  slugs: Slugs;
  sync_conflicts: SyncConflicts;
  sync_incarnations: SyncIncarnations;
  sync_leases: SyncLeases;
  sync_outbox: SyncOutbox;
  sync_push_state: SyncPushState;
  sync_scan_epochs: SyncScanEpochs;
  sync_site_blocks: SyncSiteBlocks;
  sync_sites: SyncSites;
  sync_tombstones: SyncTombstones;
  sync_unapplied: SyncUnapplied;
  sync_versions: SyncVersions;
  templates: Templates;
  webhook_attempts: WebhookAttempts;
  webhook_claims: WebhookClaims;
  webhook_deliveries: WebhookDeliveries;
  webhook_fanout_cursor: WebhookFanoutCursor;
  webhooks: Webhooks;
}
