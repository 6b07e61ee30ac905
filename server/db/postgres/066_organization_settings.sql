-- An organization's settings (issue 20; SQLite migration 066): its scan domain, printed on every
-- label and written on every tag; NULL = the instance default (--scan-base). id = org_id = the
-- organization's id, so that sync's generic capture and apply treat it like every synced table.
CREATE TABLE organization_settings (
  id         TEXT PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
  org_id     TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  scan_base  TEXT,
  updated_at TEXT NOT NULL
);

-- Captured for sync like the tables of 050_sync_capture.sql (entity 'organization').
CREATE TRIGGER sync_organization_settings AFTER INSERT OR UPDATE OF scan_base, updated_at ON organization_settings
  FOR EACH ROW EXECUTE FUNCTION waymark_sync_capture('organization', 'scan_base', 'updated_at');
