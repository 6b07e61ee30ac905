-- Core schema: organizations, API keys, slugs, nodes, batches, templates, routing rules,
-- the durable event outbox and the job table. Timestamps are ISO 8601 UTC strings
-- (lexicographic order = time order).

CREATE TABLE organizations (
  id         TEXT PRIMARY KEY,
  name       TEXT NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE api_keys (
  id           TEXT PRIMARY KEY,
  org_id       TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name         TEXT NOT NULL,
  prefix       TEXT NOT NULL,            -- first characters of the key, shown in lists
  key_hash     TEXT NOT NULL UNIQUE,     -- SHA-256 of the whole key; the key itself is never stored
  plan         TEXT NOT NULL CHECK (plan IN ('developer', 'pro', 'enterprise')),
  limits_json  TEXT,                     -- enterprise: {standard_per_minute, batch_per_minute, burst_per_second}
  created_at   TEXT NOT NULL,
  last_used_at TEXT,
  revoked_at   TEXT
);
CREATE INDEX api_keys_org ON api_keys(org_id, created_at);

-- Slug space: a 40-bit value = (block << 16) | offset. An instance mints only from blocks it
-- holds; next_offset only grows, so a value is never minted twice.
CREATE TABLE slug_blocks (
  block       INTEGER PRIMARY KEY,
  next_offset INTEGER NOT NULL DEFAULT 0,
  source      TEXT NOT NULL,             -- 'local' (standalone pick) or 'lease' (from the remote)
  acquired_at TEXT NOT NULL
);

-- Every slug ever minted. A deleted node leaves its row here with deleted_at set (tombstone).
CREATE TABLE slugs (
  slug       TEXT PRIMARY KEY,
  org_id     TEXT NOT NULL,
  node_id    TEXT NOT NULL,
  minted_at  TEXT NOT NULL,
  deleted_at TEXT
);

CREATE TABLE templates (
  id            TEXT PRIMARY KEY,
  org_id        TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name          TEXT NOT NULL,
  function_type TEXT NOT NULL,
  payload_json  TEXT NOT NULL,
  locked_fields_json TEXT NOT NULL DEFAULT '[]',
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE INDEX templates_org ON templates(org_id, created_at);

CREATE TABLE batches (
  id            TEXT PRIMARY KEY,
  org_id        TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  label         TEXT NOT NULL,
  prefix        TEXT NOT NULL,
  quantity      INTEGER NOT NULL,
  serial_start  INTEGER NOT NULL,        -- first serial number reserved for this batch
  function_type TEXT NOT NULL,
  base_payload_json TEXT,
  template_id   TEXT,
  status        TEXT NOT NULL,
  failure_reason TEXT,
  nodes_generated INTEGER NOT NULL DEFAULT 0,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE INDEX batches_org ON batches(org_id, created_at);
CREATE INDEX batches_status ON batches(status);

-- Serial numbering per organization and prefix: a reused prefix continues the numbering.
CREATE TABLE serial_counters (
  org_id TEXT NOT NULL,
  prefix TEXT NOT NULL,
  next_number INTEGER NOT NULL,
  PRIMARY KEY (org_id, prefix)
);

CREATE TABLE nodes (
  id            TEXT PRIMARY KEY,
  org_id        TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  slug          TEXT NOT NULL UNIQUE,
  label         TEXT NOT NULL,
  function_type TEXT NOT NULL,
  payload_json  TEXT NOT NULL,
  status        TEXT NOT NULL,
  hardware_id   TEXT,
  scan_count    INTEGER NOT NULL DEFAULT 0,
  template_id   TEXT REFERENCES templates(id) ON DELETE SET NULL,
  batch_id      TEXT REFERENCES batches(id) ON DELETE SET NULL,
  serial        TEXT,
  serial_number INTEGER,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL,
  UNIQUE (org_id, serial)
);
CREATE INDEX nodes_org_created ON nodes(org_id, created_at);
CREATE INDEX nodes_org_status ON nodes(org_id, status, created_at DESC);
CREATE INDEX nodes_org_type ON nodes(org_id, function_type, created_at DESC);
CREATE INDEX nodes_batch ON nodes(batch_id, serial_number);
CREATE INDEX nodes_template ON nodes(template_id);
CREATE UNIQUE INDEX nodes_hardware ON nodes(org_id, hardware_id) WHERE hardware_id IS NOT NULL;

CREATE TABLE rules (
  id            TEXT PRIMARY KEY,
  node_id       TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
  rule_type     TEXT NOT NULL,
  conditions_json TEXT NOT NULL,
  function_type TEXT NOT NULL,
  payload_json  TEXT NOT NULL,
  priority      INTEGER NOT NULL DEFAULT 0,
  enabled       INTEGER NOT NULL DEFAULT 1,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE INDEX rules_node ON rules(node_id, priority, created_at);

-- Durable event outbox, written in the same transaction as the change that caused it.
-- Webhook delivery (and later sync) reads from here; id doubles as the webhook-id.
CREATE TABLE outbox_events (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  id         TEXT NOT NULL UNIQUE,
  org_id     TEXT NOT NULL,
  type       TEXT NOT NULL,
  data_json  TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX outbox_org ON outbox_events(org_id, seq);

-- Instance-wide settings (instance id, paired remote, …).
CREATE TABLE settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
