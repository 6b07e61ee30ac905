-- Scans on many processes (issue 19, docs/scans.md "On PostgreSQL"). PostgreSQL only: SQLite has
-- one writer, so its commit order is its id order and nothing here applies to it.
--
-- 1. The roll-up fold's watermark. With several writers, scan ids are handed out at INSERT and
--    committed in any order: a fold reading "id > watermark" could pass over a scan whose
--    transaction commits later, and never count it. Each scan row now carries the id of the
--    transaction that wrote it; the fold reads only rows of transactions older than the oldest
--    one still running (pg_snapshot_xmin), a set that can no longer grow, in (xid, id) order.
--    The watermark is the pair (last_xid, last_event). Rows already here all get this
--    migration's transaction id, and so does the state row, so (this xid, last_event) is exactly
--    where the fold stood. The state's default is the writing transaction's id for the same
--    reason: `waymark migrate` copies the scans and then the state in one transaction, and the
--    fold goes on from (that transaction, last_event).
ALTER TABLE scan_events ADD COLUMN xid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX scan_events_fold ON scan_events (xid, id);
ALTER TABLE scan_rollup_state ADD COLUMN last_xid xid8 NOT NULL DEFAULT pg_current_xact_id();

-- 2. A node's scans not folded yet are those after the (xid, id) watermark, not after an id.
CREATE OR REPLACE FUNCTION waymark_delete_node_scans() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  folded_xid xid8;
  folded_id BIGINT;
BEGIN
  SELECT last_xid, last_event INTO folded_xid, folded_id FROM scan_rollup_state WHERE id = 1;
  DELETE FROM scan_events WHERE id IN (SELECT id FROM scan_events_by_node WHERE node_id = OLD.id);
  DELETE FROM scan_events WHERE (xid, id) > (folded_xid, folded_id) AND node_id = OLD.id;
  DELETE FROM scan_events_by_node WHERE node_id = OLD.id;
  RETURN NULL;
END $$;

-- 3. Every process caches what its scan path resolves: the same triggers that move the epoch
--    tell the other processes at commit (LISTEN waymark_scan_cache), with the new epoch.
CREATE OR REPLACE FUNCTION waymark_scan_cache_bump() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  moved BIGINT;
BEGIN
  UPDATE scan_cache_epoch SET epoch = epoch + 1 WHERE id = 1 RETURNING epoch INTO moved;
  PERFORM pg_notify('waymark_scan_cache', moved::text);
  RETURN NULL;
END $$;
