-- The node list's pages in index order (issue 19; see the SQLite migration
-- 072_nodes_list_order.sql): newest first, ties by insertion (rowid), so each index ends with
-- rowid and a backward scan returns the first page without sorting the organization's nodes.
DROP INDEX nodes_org_created;
CREATE INDEX nodes_org_created ON nodes(org_id, created_at, rowid);
DROP INDEX nodes_org_status;
CREATE INDEX nodes_org_status ON nodes(org_id, status, created_at, rowid);
DROP INDEX nodes_org_type;
CREATE INDEX nodes_org_type ON nodes(org_id, function_type, created_at, rowid);
