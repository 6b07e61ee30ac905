-- The node list's filtered pages in index order (issue 19: listing an organization of 1 M nodes).
-- The list is newest first, ties by insertion: ORDER BY created_at DESC, rowid DESC. An index
-- entry ends with its rowid, ascending; read backwards, (org_id, status, created_at) gives that
-- order, but (…, created_at DESC) gives created_at DESC with rowid ascending, so a status or type
-- filter sorted every matching node before its first page.
DROP INDEX nodes_org_status;
CREATE INDEX nodes_org_status ON nodes(org_id, status, created_at);
DROP INDEX nodes_org_type;
CREATE INDEX nodes_org_type ON nodes(org_id, function_type, created_at);
