-- The organization's QR style and logo travel with sync (issue 17 item 2; docs/sync.md): they move
-- from qr_styles (077) into the organization's settings row (066), which sync already carries
-- (entity 'organization'), as two fields, each last-writer-wins as a whole:
--   qr_style_json  {fg, bg, module_style, logo, frame_text, updated_at}: the colours only ever
--                  change as a pair one writer checked for contrast; NULL = the built-in style;
--   qr_logo_json   {png (base64, as re-encoded), width, height, uploaded_as, updated_at}; NULL = none.
ALTER TABLE organization_settings ADD COLUMN qr_style_json TEXT;
ALTER TABLE organization_settings ADD COLUMN qr_logo_json TEXT;

-- A creation now carries only the fields that are set (json_patch drops nulls): two sides that each
-- created the row (a scan domain set on the remote, a style at a site not yet paired) must not
-- blank each other's fields with the nulls of their creation.
DROP TRIGGER sync_organization_settings_ins;
DROP TRIGGER sync_organization_settings_upd;
CREATE TRIGGER sync_organization_settings_ins AFTER INSERT ON organization_settings BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  VALUES (NEW.org_id, 'organization', NEW.id, 'upsert',
          json_patch('{}', json_object('scan_base', NEW.scan_base, 'qr_style_json', NEW.qr_style_json, 'qr_logo_json', NEW.qr_logo_json, 'updated_at', NEW.updated_at)),
          waymark_hlc(), waymark_writer(), waymark_group(), NULL, waymark_sync_applying(), waymark_sync_applying());
END;
CREATE TRIGGER sync_organization_settings_upd AFTER UPDATE OF scan_base, qr_style_json, qr_logo_json, updated_at ON organization_settings BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  SELECT NEW.org_id, 'organization', NEW.id, 'upsert', d.f, waymark_hlc(), waymark_writer(), waymark_group(), NULL, waymark_sync_applying(), waymark_sync_applying()
    FROM (SELECT waymark_diff(json_object('scan_base', OLD.scan_base, 'qr_style_json', OLD.qr_style_json, 'qr_logo_json', OLD.qr_logo_json, 'updated_at', OLD.updated_at),
                              json_object('scan_base', NEW.scan_base, 'qr_style_json', NEW.qr_style_json, 'qr_logo_json', NEW.qr_logo_json, 'updated_at', NEW.updated_at)) AS f) d
   WHERE d.f IS NOT NULL;
END;

-- Styles set before this release move over through the triggers above, so they sync too.
INSERT INTO organization_settings (id, org_id, updated_at, qr_style_json, qr_logo_json)
SELECT org_id, org_id, updated_at,
       -- '' || : plain text, not a value of JSON subtype, so the trigger records it as a string.
       '' || json_object('fg', fg, 'bg', bg, 'module_style', module_style, 'logo', json(CASE WHEN logo = 1 THEN 'true' ELSE 'false' END),
                   'frame_text', frame_text, 'updated_at', updated_at),
       CASE WHEN logo_png IS NULL THEN NULL
            ELSE '' || json_object('png', logo_png, 'width', logo_width, 'height', logo_height, 'uploaded_as', logo_uploaded_as, 'updated_at', COALESCE(logo_updated_at, updated_at)) END
  FROM qr_styles WHERE true
    ON CONFLICT (id) DO UPDATE SET qr_style_json = excluded.qr_style_json, qr_logo_json = excluded.qr_logo_json;
DROP TABLE qr_styles;
