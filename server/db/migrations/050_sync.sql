-- Sync, first slice: pairing and slug leases (docs/sync.md).
--
-- Remote side (every instance can be a remote): the sites registered per organization, their
-- incarnations (one per copy of a site's data: a restored backup or a cloned disk starts a new
-- one) and every slug block leased to a site. A block appears here at most once, ever: it is
-- never leased twice, and the remote's own minting skips these blocks.
CREATE TABLE sync_sites (
  site_id      TEXT PRIMARY KEY,
  org_id       TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name         TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  last_seen_at TEXT NOT NULL
);
CREATE INDEX sync_sites_org ON sync_sites(org_id, created_at);

CREATE TABLE sync_incarnations (
  site_id      TEXT NOT NULL REFERENCES sync_sites(site_id) ON DELETE CASCADE,
  incarnation  TEXT NOT NULL,
  -- Fencing token: every call presents the current token and the next one; a call presenting a
  -- stale token comes from a copy of the data that forked (docs/sync.md, "Incarnations").
  token        TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  last_seen_at TEXT NOT NULL,
  PRIMARY KEY (site_id, incarnation)
);

CREATE TABLE sync_leases (
  block        INTEGER PRIMARY KEY,
  org_id       TEXT NOT NULL,
  site_id      TEXT NOT NULL,
  incarnation  TEXT NOT NULL,
  kind         TEXT NOT NULL CHECK (kind IN ('lease', 'claim')), -- claim: picked by a standalone before pairing
  grant_token  TEXT NOT NULL,          -- the call that granted it: a retried call gets the same blocks
  leased_at    TEXT NOT NULL
);
CREATE INDEX sync_leases_site ON sync_leases(site_id, incarnation, grant_token);

-- Site side: what happened to each block this instance held, beyond slug_blocks' own state.
--   leased   granted by the remote (or a local block the remote confirmed) to `incarnation`
--   dropped  a local block the remote refused (another site holds it): no more slugs from it
--   retired  abandoned when a new incarnation started (the other copy may still mint from it)
-- `used` is slug_blocks.next_offset when the block was dropped or retired.
CREATE TABLE sync_site_blocks (
  block       INTEGER PRIMARY KEY,
  incarnation TEXT NOT NULL,
  state       TEXT NOT NULL CHECK (state IN ('leased', 'dropped', 'retired')),
  used        INTEGER,
  reason      TEXT,
  updated_at  TEXT NOT NULL
);

-- Conflicts found by sync, shown by GET /v1/sync/status. For now only `block_conflict`: slugs
-- minted before pairing from a block another site holds.
CREATE TABLE sync_conflicts (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  kind        TEXT NOT NULL,
  detail_json TEXT NOT NULL,
  detected_at TEXT NOT NULL
);
