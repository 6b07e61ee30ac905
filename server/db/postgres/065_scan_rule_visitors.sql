-- Split tests (issue 17 item 4): unique visitors per variant; the same table as the SQLite
-- migration 065_scan_rule_visitors.sql (see there).
CREATE TABLE scan_rule_visitor_hours (
  node_id      TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
  rule_key     TEXT NOT NULL,           -- scan_events.rule_id, '' for NULL (the node's own payload)
  hour         BIGINT NOT NULL,         -- epoch hours
  visitor_hash TEXT NOT NULL,
  PRIMARY KEY (node_id, rule_key, hour, visitor_hash)
);

-- The scans already folded: below the fold's (transaction, id) watermark (064_scans_many_processes.sql);
-- those above it are added by the fold itself.
INSERT INTO scan_rule_visitor_hours (node_id, rule_key, hour, visitor_hash)
  SELECT DISTINCT e.node_id, coalesce(e.rule_id, ''), e.ts / 3600000, e.visitor_hash
  FROM scan_events e, scan_rollup_state s
  WHERE s.id = 1 AND e.is_bot = 0 AND (e.xid, e.id) <= (s.last_xid, s.last_event)
    AND EXISTS (SELECT 1 FROM nodes n WHERE n.id = e.node_id)
ON CONFLICT DO NOTHING;
