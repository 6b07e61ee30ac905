-- Organization analytics by day and by week read per-day sums (issue 19: 90 days of an
-- organization with 1 M scans took 92 ms by day and 103 ms by week on PostgreSQL, target 100 ms).
-- Their totals, series and breakdowns summed scan_org_rollups: one row per hour, dimension and
-- value, 24 times the rows a per-day sum needs for a range of whole days (which day and week
-- buckets always are). The fold now also keeps
--   - scan_org_day_rollups: the same sums per organization and day;
-- hour buckets, and ranges with hours at their edges, still read scan_org_rollups.
-- A deleted node's scans leave it as they leave scan_org_rollups (migration 071): taken off
-- before its roll-ups are deleted; sums that reach 0 stay as rows, the queries skip them.
CREATE TABLE scan_org_day_rollups (
  org_id TEXT NOT NULL,
  dim    TEXT NOT NULL,                -- as scan_rollups.dim
  day    INTEGER NOT NULL,             -- epoch days
  value  TEXT NOT NULL,
  scans  INTEGER NOT NULL,
  PRIMARY KEY (org_id, dim, day, value)
) WITHOUT ROWID;

-- What is folded so far is in scan_org_rollups (the fold adds the rest).
INSERT INTO scan_org_day_rollups (org_id, dim, day, value, scans)
  SELECT org_id, dim, hour / 24, value, sum(scans) FROM scan_org_rollups GROUP BY org_id, dim, hour / 24, value;

CREATE TRIGGER scan_org_day_rollups_node_deleted BEFORE DELETE ON nodes BEGIN
  UPDATE scan_org_day_rollups SET scans = scan_org_day_rollups.scans - r.scans
    FROM (SELECT dim, hour / 24 AS day, value, sum(scans) AS scans FROM scan_rollups WHERE node_id = OLD.id GROUP BY dim, hour / 24, value) r
   WHERE scan_org_day_rollups.org_id = OLD.org_id AND scan_org_day_rollups.dim = r.dim
     AND scan_org_day_rollups.day = r.day AND scan_org_day_rollups.value = r.value;
END;
