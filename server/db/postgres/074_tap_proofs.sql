-- Tags that prove the tap (issue 16): NTAG 424 DNA secure unique messages at scan time.
-- One row per personalised tag: which node it serves, the master key version its keys were
-- diversified from, and the highest SDM read counter accepted (the replay guard). No key is
-- stored here: keys are diversified from the organization master key in the secret store.
CREATE TABLE tap_proof_tags (
  org_id       TEXT NOT NULL,
  uid          TEXT NOT NULL,           -- upper-case hex (an NTAG 424 DNA UID is 7 bytes)
  kind         TEXT NOT NULL,           -- tap proof kind: ntag424 (server/features/tapproofs/kinds/)
  node_id      TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
  key_version  BIGINT NOT NULL,        -- master key version the tag's keys come from
  last_counter BIGINT NOT NULL DEFAULT -1, -- highest read counter accepted, -1 = none yet
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  PRIMARY KEY (org_id, kind, uid)
);
CREATE INDEX tap_proof_tags_node ON tap_proof_tags(node_id);

-- Per node: what a tag URL without a valid proof gets ('serve' = as usual, recorded as
-- nfc_unverified; 'refuse' = the "could not be verified" page). No row = 'serve'.
CREATE TABLE tap_proof_policies (
  node_id    TEXT PRIMARY KEY REFERENCES nodes(id) ON DELETE CASCADE,
  org_id     TEXT NOT NULL,
  policy     TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- A scan's source is now qr | nfc_verified | nfc_unverified: a `?nfc` URL proves nothing, so
-- what was recorded as nfc is an unverified tag scan (docs/scans.md).
UPDATE scan_events SET source = 'nfc_unverified' WHERE source = 'nfc';
UPDATE scan_rollups SET value = 'nfc_unverified' WHERE dim = 'source' AND value = 'nfc';
UPDATE scan_org_rollups SET value = 'nfc_unverified' WHERE dim = 'source' AND value = 'nfc';
