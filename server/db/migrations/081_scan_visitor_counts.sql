-- Unique visitors without counting visitor keys (issue 19: organization analytics over 90 days of
-- 1 M scans). Visitor keys are per day (the salt changes at midnight UTC), so the unique visitors
-- of a range of whole days are the sum of each day's distinct keys: exact, not an estimate. The
-- fold now keeps those per-day counts beside the key sets (it adds the keys a chunk brings that the
-- day's set does not hold yet), and day and week figures sum at most one row per day instead of
-- counting about one (day, key) row per scan:
--   - a node's: scan_node_days.visitors (the row of its day's scans; it goes with the node);
--   - an organization's: scan_org_days (like scan_org_visitor_days, not tied to a node: they stay
--     when a node is deleted).
ALTER TABLE scan_node_days ADD COLUMN visitors INTEGER NOT NULL DEFAULT 0;
UPDATE scan_node_days SET visitors = (
  SELECT count(*) FROM scan_visitor_days v WHERE v.node_id = scan_node_days.node_id AND v.day = scan_node_days.day);

CREATE TABLE scan_org_days (
  org_id   TEXT NOT NULL,
  day      INTEGER NOT NULL,           -- epoch days
  visitors INTEGER NOT NULL,
  PRIMARY KEY (org_id, day)
) WITHOUT ROWID;
INSERT INTO scan_org_days (org_id, day, visitors)
  SELECT org_id, day, count(*) FROM scan_org_visitor_days GROUP BY org_id, day;
