-- The node list's total without counting the organization's nodes (issue 19: the first page of an
-- organization of 1 M nodes under 20 ms; its total was a count(*) over the organization's index
-- entries, linear in its nodes). node_counts holds the number of nodes per (organization, status,
-- function type), kept in the transaction of every write to nodes by triggers: the nodes feature
-- is the one writer, but triggers also see what reaches nodes around it (an organization's delete
-- cascading to its nodes, `waymark migrate`, a benchmark's set-based seed), so no write can leave
-- the counts behind. The list reads them when it filters by nothing but status and type; a search
-- or a batch filter still counts the matching nodes.
-- Readers sum the rows of an organization (on PostgreSQL the rows are deltas, compacted by the
-- reader: postgres/080_node_counts.sql); here there is one writer, so one row per key.
CREATE TABLE node_counts (
  org_id        TEXT NOT NULL,
  status        TEXT NOT NULL,
  function_type TEXT NOT NULL,
  nodes         INTEGER NOT NULL,
  PRIMARY KEY (org_id, status, function_type)
) WITHOUT ROWID;
INSERT INTO node_counts (org_id, status, function_type, nodes)
  SELECT org_id, status, function_type, count(*) FROM nodes GROUP BY org_id, status, function_type;

CREATE TRIGGER node_counts_ins AFTER INSERT ON nodes BEGIN
  INSERT INTO node_counts (org_id, status, function_type, nodes) VALUES (NEW.org_id, NEW.status, NEW.function_type, 1)
    ON CONFLICT (org_id, status, function_type) DO UPDATE SET nodes = nodes + 1;
END;
CREATE TRIGGER node_counts_del AFTER DELETE ON nodes BEGIN
  UPDATE node_counts SET nodes = nodes - 1 WHERE org_id = OLD.org_id AND status = OLD.status AND function_type = OLD.function_type;
END;
CREATE TRIGGER node_counts_upd AFTER UPDATE OF org_id, status, function_type ON nodes
  WHEN OLD.org_id IS NOT NEW.org_id OR OLD.status IS NOT NEW.status OR OLD.function_type IS NOT NEW.function_type
BEGIN
  UPDATE node_counts SET nodes = nodes - 1 WHERE org_id = OLD.org_id AND status = OLD.status AND function_type = OLD.function_type;
  INSERT INTO node_counts (org_id, status, function_type, nodes) VALUES (NEW.org_id, NEW.status, NEW.function_type, 1)
    ON CONFLICT (org_id, status, function_type) DO UPDATE SET nodes = nodes + 1;
END;
