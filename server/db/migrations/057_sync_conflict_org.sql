-- Conflicts belong to an organization: a key sees only its own organization's (and the
-- instance-wide ones, org_id NULL: block conflicts of the site itself). remote_id: a conflict the
-- remote found in this site's pushes and sent down with the change feed.
ALTER TABLE sync_conflicts ADD COLUMN org_id TEXT;
ALTER TABLE sync_conflicts ADD COLUMN remote_id INTEGER;
CREATE INDEX sync_conflicts_org ON sync_conflicts(org_id, id);
