-- Split tests (issue 17 item 4): unique visitors per variant; the same table as the SQLite
-- migration 013_scan_rule_visitors.sql (see there).
CREATE TABLE scan_rule_visitor_hours (
  node_id      TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
  rule_key     TEXT NOT NULL,           -- scan_events.rule_id, '' for NULL (the node's own payload)
  hour         BIGINT NOT NULL,         -- epoch hours
  visitor_hash TEXT NOT NULL,
  PRIMARY KEY (node_id, rule_key, hour, visitor_hash)
);

INSERT INTO scan_rule_visitor_hours (node_id, rule_key, hour, visitor_hash)
  SELECT DISTINCT e.node_id, coalesce(e.rule_id, ''), e.ts / 3600000, e.visitor_hash FROM scan_events e
  WHERE e.is_bot = 0 AND e.id <= (SELECT last_event FROM scan_rollup_state WHERE id = 1)
    AND EXISTS (SELECT 1 FROM nodes n WHERE n.id = e.node_id)
ON CONFLICT DO NOTHING;
