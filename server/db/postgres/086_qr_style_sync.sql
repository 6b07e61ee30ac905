-- The organization's QR style and logo travel with sync (issue 17 item 2; SQLite migration 086,
-- which says why they are two fields): moved from qr_styles (077) into the organization's settings
-- row (066), which sync carries as entity 'organization'.
ALTER TABLE organization_settings ADD COLUMN qr_style_json TEXT, ADD COLUMN qr_logo_json TEXT;

-- A creation of the row carries only the fields that are set: two sides that each created it (a
-- scan domain set on the remote, a style at a site not yet paired) must not blank each other's
-- fields with the nulls of their creation. Edits keep 050's capture (the changed fields).
CREATE FUNCTION waymark_sync_capture_settings_created() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  VALUES (NEW.org_id, 'organization', NEW.id, 'upsert', jsonb_strip_nulls(waymark_pick(to_jsonb(NEW), TG_ARGV))::text, '', '', NULL, NULL, 0, 0);
  RETURN NULL;
END $$;

DROP TRIGGER sync_organization_settings ON organization_settings;
CREATE TRIGGER sync_organization_settings_ins AFTER INSERT ON organization_settings
  FOR EACH ROW EXECUTE FUNCTION waymark_sync_capture_settings_created('scan_base', 'qr_style_json', 'qr_logo_json', 'updated_at');
CREATE TRIGGER sync_organization_settings_upd AFTER UPDATE OF scan_base, qr_style_json, qr_logo_json, updated_at ON organization_settings
  FOR EACH ROW EXECUTE FUNCTION waymark_sync_capture('organization', 'scan_base', 'qr_style_json', 'qr_logo_json', 'updated_at');

-- Styles set before this release move over through the triggers above, so they sync too.
INSERT INTO organization_settings (id, org_id, updated_at, qr_style_json, qr_logo_json)
SELECT org_id, org_id, updated_at,
       jsonb_build_object('fg', fg, 'bg', bg, 'module_style', module_style, 'logo', logo = 1, 'frame_text', frame_text, 'updated_at', updated_at)::text,
       CASE WHEN logo_png IS NULL THEN NULL
            ELSE jsonb_build_object('png', logo_png, 'width', logo_width, 'height', logo_height, 'uploaded_as', logo_uploaded_as, 'updated_at', COALESCE(logo_updated_at, updated_at))::text END
  FROM qr_styles
    ON CONFLICT (id) DO UPDATE SET qr_style_json = excluded.qr_style_json, qr_logo_json = excluded.qr_logo_json;
DROP TABLE qr_styles;
