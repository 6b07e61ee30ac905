-- The node list's total from counts kept per (organization, status, function type): see the
-- SQLite migration 080_node_counts.sql for why. Here many processes write nodes at once, and one
-- row per key updated by every writer would make concurrent transactions writing nodes of one
-- organization wait for each other (and deadlock when they touch two keys in opposite orders).
-- So the triggers only append deltas (no row is updated, nothing waits), readers sum them, and a
-- reader that finds many rows for an organization replaces them with their sums in one statement
-- (NodesRepo.compactCounts): rows of transactions still running are invisible to it and stay.
CREATE TABLE node_counts (
  org_id        TEXT NOT NULL,
  status        TEXT NOT NULL,
  function_type TEXT NOT NULL,
  nodes         BIGINT NOT NULL
);
CREATE INDEX node_counts_org ON node_counts (org_id, status, function_type) INCLUDE (nodes);
INSERT INTO node_counts (org_id, status, function_type, nodes)
  SELECT org_id, status, function_type, count(*) FROM nodes GROUP BY org_id, status, function_type;

-- Inserts and deletes once per statement (a batch's or a seed's thousands of rows: one delta per key).
CREATE FUNCTION waymark_node_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO node_counts (org_id, status, function_type, nodes)
    SELECT org_id, status, function_type, count(*) FROM inserted_nodes GROUP BY org_id, status, function_type;
  RETURN NULL;
END $$;
CREATE TRIGGER node_counts_ins AFTER INSERT ON nodes REFERENCING NEW TABLE AS inserted_nodes
  FOR EACH STATEMENT EXECUTE FUNCTION waymark_node_counts_inserted();

CREATE FUNCTION waymark_node_counts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO node_counts (org_id, status, function_type, nodes)
    SELECT org_id, status, function_type, -count(*) FROM deleted_nodes GROUP BY org_id, status, function_type;
  RETURN NULL;
END $$;
CREATE TRIGGER node_counts_del AFTER DELETE ON nodes REFERENCING OLD TABLE AS deleted_nodes
  FOR EACH STATEMENT EXECUTE FUNCTION waymark_node_counts_deleted();

-- Updates per row, and only of the three columns (PostgreSQL allows no column list with
-- transition tables): the scan path's scan_count updates never fire it.
CREATE FUNCTION waymark_node_counts_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO node_counts (org_id, status, function_type, nodes)
    VALUES (OLD.org_id, OLD.status, OLD.function_type, -1), (NEW.org_id, NEW.status, NEW.function_type, 1);
  RETURN NULL;
END $$;
CREATE TRIGGER node_counts_upd AFTER UPDATE OF org_id, status, function_type ON nodes FOR EACH ROW
  WHEN (OLD.org_id IS DISTINCT FROM NEW.org_id OR OLD.status IS DISTINCT FROM NEW.status OR OLD.function_type IS DISTINCT FROM NEW.function_type)
  EXECUTE FUNCTION waymark_node_counts_updated();
