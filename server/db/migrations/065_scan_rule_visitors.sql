-- Split tests (issue 17 item 4): unique visitors per variant. The roll-up fold adds each human
-- scan's visitor key under the rule that served it ('' = the node's own payload), so a node's
-- analytics can count the visitors of each traffic_split rule (and of the node's payload) without
-- reading scan_events. Keys are per day, so distinct keys over whole hours are (day, key) pairs,
-- as for scan_visitor_hours. Keyed node first: the node delete cascades by this primary key.
CREATE TABLE scan_rule_visitor_hours (
  node_id      TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
  rule_key     TEXT NOT NULL,           -- scan_events.rule_id, '' for NULL (the node's own payload)
  hour         INTEGER NOT NULL,        -- epoch hours
  visitor_hash TEXT NOT NULL,
  PRIMARY KEY (node_id, rule_key, hour, visitor_hash)
) WITHOUT ROWID;

-- The scans already folded (those above the watermark are added by the fold itself).
INSERT OR IGNORE INTO scan_rule_visitor_hours (node_id, rule_key, hour, visitor_hash)
  SELECT e.node_id, coalesce(e.rule_id, ''), e.ts / 3600000, e.visitor_hash FROM scan_events e
  WHERE e.is_bot = 0 AND e.id <= (SELECT last_event FROM scan_rollup_state WHERE id = 1)
    AND EXISTS (SELECT 1 FROM nodes n WHERE n.id = e.node_id);
