-- migrate: foreign_keys off
-- Scans, performance (issue 3; docs/scans.md "Recording"). Recording a scan appends one row to
-- scan_events and nothing else that is ordered by node: the per-node index scan_events_node_time
-- put every scan on a random page (one page per scan in each group commit's WAL write and
-- fsync, measured at ~22 µs CPU per scan). The per-node order now lives in scan_events_by_node,
-- which the roll-up fold fills in id order together with the analytics roll-ups (one page per
-- node per chunk); the scan list folds what is pending before it reads, as analytics do.
--
-- scan_events loses its foreign key: ON DELETE CASCADE needs an index on node_id, or every node
-- delete would scan the whole table. The writer checks that the node exists instead (in the same
-- statement), and the trigger below deletes a node's scans through scan_events_by_node plus the
-- not yet folded tail (id above the fold's watermark). SQLite cannot drop a constraint, so the
-- table is rebuilt with the same columns (foreign keys off for this migration, see migrate.ts).
--
-- The rebuilt table also gets AUTOINCREMENT: a plain rowid is max(id) + 1, so deleting the node
-- that held the newest scans handed their ids out again, below the watermarks of the roll-up
-- fold and the sync push, and those scans were never folded or pushed.
CREATE TABLE scan_events_new (
  id           INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused (see above): the roll-up, sync and webhook watermarks
  node_id      TEXT NOT NULL,           -- nodes(id); deleted with the node by scan_events_node_deleted
  org_id       TEXT NOT NULL,
  ts           INTEGER NOT NULL,        -- Unix epoch milliseconds
  device_type  TEXT NOT NULL,
  os           TEXT NOT NULL,
  browser      TEXT,
  country      TEXT,
  source       TEXT NOT NULL,
  rule_id      TEXT,
  outcome      TEXT NOT NULL,
  is_bot       INTEGER NOT NULL DEFAULT 0,
  visitor_hash TEXT NOT NULL,
  sync_id      TEXT                     -- a pushed scan's global id at the remote (migration 055)
);
INSERT INTO scan_events_new (id, node_id, org_id, ts, device_type, os, browser, country, source, rule_id, outcome, is_bot, visitor_hash, sync_id)
  SELECT id, node_id, org_id, ts, device_type, os, browser, country, source, rule_id, outcome, is_bot, visitor_hash, sync_id FROM scan_events;
DROP TABLE scan_events;
ALTER TABLE scan_events_new RENAME TO scan_events;
CREATE UNIQUE INDEX scan_events_sync_id ON scan_events(sync_id) WHERE sync_id IS NOT NULL;

-- A node's scans, newest first (scan list, CSV export, counts with a time range or bots).
CREATE TABLE scan_events_by_node (
  node_id TEXT NOT NULL,
  ts      INTEGER NOT NULL,
  id      INTEGER NOT NULL,
  PRIMARY KEY (node_id, ts, id)
) WITHOUT ROWID;
INSERT INTO scan_events_by_node (node_id, ts, id)
  SELECT node_id, ts, id FROM scan_events WHERE id <= (SELECT last_event FROM scan_rollup_state WHERE id = 1);

CREATE TRIGGER scan_events_node_deleted AFTER DELETE ON nodes BEGIN
  DELETE FROM scan_events WHERE id IN (SELECT id FROM scan_events_by_node WHERE node_id = OLD.id);
  DELETE FROM scan_events WHERE id > (SELECT last_event FROM scan_rollup_state WHERE id = 1) AND node_id = OLD.id;
  DELETE FROM scan_events_by_node WHERE node_id = OLD.id;
END;

-- Every scan also writes a node.scanned outbox row; nothing reads the outbox by organization
-- (the fan-out, sync and /metrics read it by seq), so that index only cost each scan a B-tree insert.
DROP INDEX outbox_org;
