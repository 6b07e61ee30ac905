-- Organization roll-ups: the same tables as the SQLite migration 071_scan_org_rollups.sql (see
-- there for why).
CREATE TABLE scan_org_rollups (
  org_id TEXT NOT NULL,
  dim    TEXT NOT NULL,                -- as scan_rollups.dim
  hour   BIGINT NOT NULL,              -- epoch hours
  value  TEXT NOT NULL,
  scans  BIGINT NOT NULL,
  PRIMARY KEY (org_id, dim, hour, value)
);

CREATE TABLE scan_node_days (
  node_id TEXT NOT NULL REFERENCES nodes(id) ON DELETE CASCADE,
  day     BIGINT NOT NULL,             -- epoch days
  org_id  TEXT NOT NULL,
  scans   BIGINT NOT NULL,
  PRIMARY KEY (node_id, day)
);
CREATE INDEX scan_node_days_org ON scan_node_days(org_id, day, node_id, scans);

-- What is folded so far is in scan_rollups (the fold adds the rest).
INSERT INTO scan_org_rollups (org_id, dim, hour, value, scans)
  SELECT org_id, dim, hour, value, sum(scans) FROM scan_rollups GROUP BY org_id, dim, hour, value;
INSERT INTO scan_node_days (node_id, day, org_id, scans)
  SELECT node_id, hour / 24, min(org_id), sum(scans) FROM scan_rollups WHERE dim = '' GROUP BY node_id, hour / 24;

-- A deleted node's scans leave its organization's figures (before the cascade deletes its roll-ups).
CREATE FUNCTION waymark_scan_org_rollups_node_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE scan_org_rollups o SET scans = o.scans - r.scans
    FROM scan_rollups r
   WHERE r.node_id = OLD.id AND o.org_id = OLD.org_id AND o.dim = r.dim AND o.hour = r.hour AND o.value = r.value;
  RETURN OLD;
END $$;
CREATE TRIGGER scan_org_rollups_node_deleted BEFORE DELETE ON nodes
  FOR EACH ROW EXECUTE FUNCTION waymark_scan_org_rollups_node_deleted();
