-- An organization's settings (issue 20): its scan domain, printed on every label and written on
-- every tag ({scan_base}/v/<slug>); NULL = the instance default (--scan-base). One row per
-- organization, its id the organization's id; org_id repeats it so that sync's generic capture
-- and apply (entity 'organization', sync/apply.ts) treat it like every other synced table.
CREATE TABLE organization_settings (
  id         TEXT PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
  org_id     TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  scan_base  TEXT,
  updated_at TEXT NOT NULL
);

-- Captured for sync (migration 055): a scan domain set on the remote reaches its sites, and one
-- set on a site reaches the remote (field-level last-writer-wins). Never deleted on its own.
CREATE TRIGGER sync_organization_settings_ins AFTER INSERT ON organization_settings BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  VALUES (NEW.org_id, 'organization', NEW.id, 'upsert', json_object('scan_base', NEW.scan_base, 'updated_at', NEW.updated_at),
          waymark_hlc(), waymark_writer(), waymark_group(), NULL, waymark_sync_applying(), waymark_sync_applying());
END;
CREATE TRIGGER sync_organization_settings_upd AFTER UPDATE OF scan_base, updated_at ON organization_settings BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  SELECT NEW.org_id, 'organization', NEW.id, 'upsert', d.f, waymark_hlc(), waymark_writer(), waymark_group(), NULL, waymark_sync_applying(), waymark_sync_applying()
    FROM (SELECT waymark_diff(json_object('scan_base', OLD.scan_base, 'updated_at', OLD.updated_at),
                              json_object('scan_base', NEW.scan_base, 'updated_at', NEW.updated_at)) AS f) d
   WHERE d.f IS NOT NULL;
END;
