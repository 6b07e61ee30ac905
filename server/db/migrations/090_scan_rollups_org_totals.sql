-- The organization index of scan_rollups holds only what reads it: the totals (dim = '') by
-- organization and hour, which top nodes and nodes scanned read for the hours at the edges of a
-- range (AnalyticsRepo.nodeScans). Since migration 071 nothing else reads scan_rollups by
-- organization, yet every roll-up row of every dimension had an entry, so the fold kept an index
-- eight times larger than needed (issue 19: the fold of a bulk load of history on PostgreSQL,
-- ~5,300 → ~6,000 events/s in chunks of 5,000).
DROP INDEX scan_rollups_org;
CREATE INDEX scan_rollups_org_totals ON scan_rollups(org_id, hour) WHERE dim = '';
