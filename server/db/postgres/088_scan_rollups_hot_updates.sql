-- The fold's updates of scan_rollups as HOT updates (issue 19: the fold at 5,000 scans/s).
-- Each chunk adds to the same roll-up rows (this hour's, per node, dimension and value) with
-- ON CONFLICT DO UPDATE. The index scan_rollups_org held `scans`, so every such update changed an
-- indexed column: none could be HOT, each left a dead row version and a new entry in both
-- indexes, and the table and its indexes grew with every chunk rather than with the rows
-- (measured: 30 chunks of 5,000 events on 200 nodes, 0 of 58,000 updates HOT, 6.9 MB; without
-- `scans` in the index and with room on each page, 52,136 of 56,000 HOT, 0.97 MB, the fold about
-- a fifth faster). Since migration 071 the organization's figures read scan_org_rollups; this
-- index serves only the hours at the edges of a range (top nodes, nodes scanned), a few rows
-- each, which can read `scans` from the table. The room on each page (fillfactor) lets an
-- updated version stay on its page; it applies to pages written from now on.
DROP INDEX scan_rollups_org;
CREATE INDEX scan_rollups_org ON scan_rollups(org_id, dim, hour);
ALTER TABLE scan_rollups SET (fillfactor = 80);
