-- Organization roll-ups per day: the same table as the SQLite migration
-- 087_scan_org_day_rollups.sql (see there for why).
CREATE TABLE scan_org_day_rollups (
  org_id TEXT NOT NULL,
  dim    TEXT NOT NULL,                -- as scan_rollups.dim
  day    BIGINT NOT NULL,              -- epoch days
  value  TEXT NOT NULL,
  scans  BIGINT NOT NULL,
  PRIMARY KEY (org_id, dim, day, value)
);

-- What is folded so far is in scan_org_rollups (the fold adds the rest).
INSERT INTO scan_org_day_rollups (org_id, dim, day, value, scans)
  SELECT org_id, dim, hour / 24, value, sum(scans) FROM scan_org_rollups GROUP BY org_id, dim, hour / 24, value;

-- A deleted node's scans leave its organization's per-day sums (before the cascade deletes its roll-ups).
CREATE FUNCTION waymark_scan_org_day_rollups_node_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE scan_org_day_rollups o SET scans = o.scans - r.scans
    FROM (SELECT dim, hour / 24 AS day, value, sum(scans) AS scans FROM scan_rollups WHERE node_id = OLD.id GROUP BY dim, hour / 24, value) r
   WHERE o.org_id = OLD.org_id AND o.dim = r.dim AND o.day = r.day AND o.value = r.value;
  RETURN OLD;
END $$;
CREATE TRIGGER scan_org_day_rollups_node_deleted BEFORE DELETE ON nodes
  FOR EACH ROW EXECUTE FUNCTION waymark_scan_org_day_rollups_node_deleted();
