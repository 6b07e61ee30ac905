-- Scans (issue 3): scan events, hourly rollups for analytics, visitor-hour sets for unique
-- counts, the daily visitor salt and a change counter that invalidates the scan resolver's
-- in-memory cache of nodes and rules.

-- One row per scan (GET of /v/<slug>). No raw IP is ever stored: visitor_hash is a hash of
-- IP + User-Agent under a salt that changes every UTC day and is then forgotten.
CREATE TABLE scan_events (
  id           INTEGER PRIMARY KEY,     -- rowid: monotonic, doubles as the rollup watermark
  node_id      TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
  org_id       TEXT NOT NULL,
  ts           INTEGER NOT NULL,        -- Unix epoch milliseconds
  device_type  TEXT NOT NULL,           -- mobile | tablet | desktop | other | unknown
  os           TEXT NOT NULL,           -- ios | android | windows | macos | linux | chromeos | other | unknown
  browser      TEXT,                    -- browser family as the UA parser names it
  country      TEXT,                    -- ISO 3166-1 alpha-2, NULL when unknown
  source       TEXT NOT NULL,           -- qr | nfc
  rule_id      TEXT,                    -- matched routing rule, NULL = the node's own payload
  outcome      TEXT NOT NULL,           -- function type served, or paused | retired | inactive
  is_bot       INTEGER NOT NULL DEFAULT 0,
  visitor_hash TEXT NOT NULL
);
CREATE INDEX scan_events_node_time ON scan_events(node_id, ts DESC, id DESC);

-- Hourly counters per node and dimension (dim '' = total), human scans only, kept up to date
-- from scan_events by the roll-up step (watermark in scan_rollup_state) outside the hot path.
-- Keyed dimension first, so a breakdown reads only its own dimension's rows.
CREATE TABLE scan_rollups (
  node_id TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
  dim     TEXT NOT NULL,                -- '' | device_type | os | browser | country | source | rule | outcome
  hour    INTEGER NOT NULL,             -- epoch hours (ts / 3600000)
  value   TEXT NOT NULL,                -- '' for unknown / total
  scans   INTEGER NOT NULL,
  org_id  TEXT NOT NULL,
  PRIMARY KEY (node_id, dim, hour, value)
) WITHOUT ROWID;
CREATE INDEX scan_rollups_org ON scan_rollups(org_id, dim, hour, value, scans);

-- Distinct visitors. Visitor keys change every UTC day, so "unique visitors" over a range is
-- the number of (day, key) pairs: a plain count over these sets, no DISTINCT over scans.
CREATE TABLE scan_visitor_hours (
  node_id      TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
  hour         INTEGER NOT NULL,
  visitor_hash TEXT NOT NULL,
  org_id       TEXT NOT NULL,
  PRIMARY KEY (node_id, hour, visitor_hash)
) WITHOUT ROWID;
CREATE INDEX scan_visitor_hours_org ON scan_visitor_hours(org_id, hour, visitor_hash);

CREATE TABLE scan_visitor_days (
  node_id      TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
  day          INTEGER NOT NULL,        -- epoch days
  visitor_hash TEXT NOT NULL,
  PRIMARY KEY (node_id, day, visitor_hash)
) WITHOUT ROWID;

CREATE TABLE scan_org_visitor_days (
  org_id       TEXT NOT NULL,
  day          INTEGER NOT NULL,
  visitor_hash TEXT NOT NULL,
  PRIMARY KEY (org_id, day, visitor_hash)
) WITHOUT ROWID;

CREATE TABLE scan_rollup_state (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  last_event  INTEGER NOT NULL
);
INSERT INTO scan_rollup_state (id, last_event) VALUES (1, 0);

-- The current day's visitor salt. Replaced (and so forgotten) when the UTC day changes.
CREATE TABLE scan_salt (
  id   INTEGER PRIMARY KEY CHECK (id = 1),
  day  TEXT NOT NULL,
  salt TEXT NOT NULL
);

-- Bumped by triggers on every change that can alter what a scan serves; the scan resolver
-- compares it before using its in-memory cache, whichever code path made the change.
CREATE TABLE scan_cache_epoch (
  id    INTEGER PRIMARY KEY CHECK (id = 1),
  epoch INTEGER NOT NULL
);
INSERT INTO scan_cache_epoch (id, epoch) VALUES (1, 0);

CREATE TRIGGER scan_cache_nodes_ins AFTER INSERT ON nodes
BEGIN UPDATE scan_cache_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER scan_cache_nodes_del AFTER DELETE ON nodes
BEGIN UPDATE scan_cache_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER scan_cache_nodes_upd AFTER UPDATE OF id, org_id, slug, function_type, payload_json, status ON nodes
BEGIN UPDATE scan_cache_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER scan_cache_rules_ins AFTER INSERT ON rules
BEGIN UPDATE scan_cache_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER scan_cache_rules_del AFTER DELETE ON rules
BEGIN UPDATE scan_cache_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER scan_cache_rules_upd AFTER UPDATE ON rules
BEGIN UPDATE scan_cache_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER scan_cache_slugs_ins AFTER INSERT ON slugs
BEGIN UPDATE scan_cache_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER scan_cache_slugs_upd AFTER UPDATE ON slugs
BEGIN UPDATE scan_cache_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER scan_cache_slugs_del AFTER DELETE ON slugs
BEGIN UPDATE scan_cache_epoch SET epoch = epoch + 1 WHERE id = 1; END;
