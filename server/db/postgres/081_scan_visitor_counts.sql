-- Per-day unique visitor counts kept by the fold: the same as the SQLite migration
-- 081_scan_visitor_counts.sql (see there for why).
ALTER TABLE scan_node_days ADD COLUMN visitors BIGINT NOT NULL DEFAULT 0;
UPDATE scan_node_days d SET visitors = v.n
  FROM (SELECT node_id, day, count(*) AS n FROM scan_visitor_days GROUP BY node_id, day) v
 WHERE v.node_id = d.node_id AND v.day = d.day;

CREATE TABLE scan_org_days (
  org_id   TEXT NOT NULL,
  day      BIGINT NOT NULL,            -- epoch days
  visitors BIGINT NOT NULL,
  PRIMARY KEY (org_id, day)
);
INSERT INTO scan_org_days (org_id, day, visitors)
  SELECT org_id, day, count(*) FROM scan_org_visitor_days GROUP BY org_id, day;
