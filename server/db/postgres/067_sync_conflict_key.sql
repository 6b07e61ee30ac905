-- One entry per conflict on each instance (issue 15): a lost change can be found by the remote (on
-- push) and by the site (on pull), and found again when a change is replayed. conflict_key names
-- the losing change (kind, entity, id and version, or the clashing serial); the remote's copy sent
-- down merges into a local entry with the same key. remote_resolved_at: when a conflict resolved
-- at the site was marked resolved at the remote too. Entries logged before this have no key.
ALTER TABLE sync_conflicts ADD COLUMN conflict_key TEXT;
ALTER TABLE sync_conflicts ADD COLUMN remote_resolved_at TEXT;
CREATE UNIQUE INDEX sync_conflicts_key ON sync_conflicts(org_id, conflict_key) WHERE conflict_key IS NOT NULL;
