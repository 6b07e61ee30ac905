-- NFC tag programming: batch writing sessions (resumable after a crash) and a log of every tag
-- written. A node's binding to its tag is nodes.hardware_id (core schema).

CREATE TABLE nfc_sessions (
  id             TEXT PRIMARY KEY,
  org_id         TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  batch_id       TEXT NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  status         TEXT NOT NULL CHECK (status IN ('active', 'stopped', 'completed')),
  lock_tags      INTEGER NOT NULL DEFAULT 0,   -- lock each tag permanently after verifying
  allow_reassign INTEGER NOT NULL DEFAULT 0,   -- take over tags bound to other nodes
  started_at     TEXT NOT NULL,
  updated_at     TEXT NOT NULL,
  ended_at       TEXT
);
-- At most one active session per instance (one technician, one reader).
CREATE UNIQUE INDEX nfc_sessions_one_active ON nfc_sessions(status) WHERE status = 'active';
CREATE INDEX nfc_sessions_batch ON nfc_sessions(batch_id, started_at);

-- One row per node of the session's batch. The next tag asked for is the first 'pending' item
-- in serial order (then the first 'skipped' one); 'written' is set in the same transaction that
-- binds the UID to the node, so a restart resumes at the right serial.
CREATE TABLE nfc_session_items (
  session_id    TEXT NOT NULL REFERENCES nfc_sessions(id) ON DELETE CASCADE,
  node_id       TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
  serial_number INTEGER NOT NULL,
  state         TEXT NOT NULL CHECK (state IN ('pending', 'written', 'skipped', 'lost')),
  uid           TEXT,
  attempts      INTEGER NOT NULL DEFAULT 0,
  last_error    TEXT,
  updated_at    TEXT NOT NULL,
  PRIMARY KEY (session_id, node_id)
);
CREATE INDEX nfc_session_items_order ON nfc_session_items(session_id, state, serial_number);

CREATE TABLE nfc_writes (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  org_id     TEXT NOT NULL,
  node_id    TEXT NOT NULL,
  session_id TEXT,
  uid        TEXT NOT NULL,
  url        TEXT NOT NULL,
  tag_type   TEXT NOT NULL,
  locked     INTEGER NOT NULL,
  written_at TEXT NOT NULL
);
CREATE INDEX nfc_writes_node ON nfc_writes(node_id, seq);
