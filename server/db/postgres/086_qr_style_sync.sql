-- The organization's QR style and logo travel with sync (issue 17 item 2; SQLite migration 086,
-- which says why they are two fields): moved from qr_styles (077) into the organization's settings
-- row (066), which sync carries as entity 'organization'.
ALTER TABLE organization_settings ADD COLUMN qr_style_json TEXT, ADD COLUMN qr_logo_json TEXT;

-- The capture of 050, with one change: an organization's settings row is created with only the
-- fields that are set, so two sides that each created it do not blank each other's fields.
CREATE OR REPLACE FUNCTION waymark_sync_capture() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  entity TEXT := TG_ARGV[0];
  cols   TEXT[] := TG_ARGV[1:];
  j      JSONB;
  fields JSONB;
  op     TEXT := 'upsert';
  org    TEXT;
  hold   TEXT;
BEGIN
  IF TG_OP = 'DELETE' THEN
    j := to_jsonb(OLD);
    op := 'delete';
    IF entity = 'node' THEN
      -- The slug's deletion time travels with the delete (SQLite migration 058).
      fields := jsonb_build_object('slug', j ->> 'slug', 'deleted_at', (SELECT s.deleted_at FROM slugs s WHERE s.slug = j ->> 'slug'));
    ELSIF entity = 'rule' THEN
      fields := jsonb_build_object('node_id', j ->> 'node_id');
    ELSE
      fields := '{}'::jsonb;
    END IF;
  ELSE
    j := to_jsonb(NEW);
    fields := waymark_pick(j, cols);
    IF TG_OP = 'UPDATE' THEN
      fields := waymark_diff(waymark_pick(to_jsonb(OLD), cols), fields);
      IF fields IS NULL THEN
        RETURN NULL;
      END IF;
    ELSIF entity = 'organization' THEN
      -- A creation carries only the fields that are set (SQLite migration 086).
      fields := jsonb_strip_nulls(fields);
    ELSIF entity = 'node' THEN
      -- The slug's minting time travels with the node's creation (SQLite migration 056).
      fields := fields || jsonb_build_object('minted_at', (SELECT s.minted_at FROM slugs s WHERE s.slug = j ->> 'slug'));
    END IF;
  END IF;
  IF entity = 'rule' THEN
    SELECT n.org_id INTO org FROM nodes n WHERE n.id = j ->> 'node_id';
  ELSE
    org := j ->> 'org_id';
  END IF;
  hold := CASE entity WHEN 'node' THEN j ->> 'batch_id' WHEN 'batch' THEN j ->> 'id' END;
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  VALUES (org, entity, j ->> 'id', op, fields::text, '', '', NULL, hold, CASE WHEN entity = 'api_key' THEN 1 ELSE 0 END, 0);
  RETURN NULL;
END $$;

DROP TRIGGER sync_organization_settings ON organization_settings;
CREATE TRIGGER sync_organization_settings AFTER INSERT OR UPDATE OF scan_base, qr_style_json, qr_logo_json, updated_at ON organization_settings
  FOR EACH ROW EXECUTE FUNCTION waymark_sync_capture('organization', 'scan_base', 'qr_style_json', 'qr_logo_json', 'updated_at');

-- Styles set before this release move over through the trigger above, so they sync too.
INSERT INTO organization_settings (id, org_id, updated_at, qr_style_json, qr_logo_json)
SELECT org_id, org_id, updated_at,
       jsonb_build_object('fg', fg, 'bg', bg, 'module_style', module_style, 'logo', logo = 1, 'frame_text', frame_text, 'updated_at', updated_at)::text,
       CASE WHEN logo_png IS NULL THEN NULL
            ELSE jsonb_build_object('png', logo_png, 'width', logo_width, 'height', logo_height, 'uploaded_as', logo_uploaded_as, 'updated_at', COALESCE(logo_updated_at, updated_at))::text END
  FROM qr_styles
    ON CONFLICT (id) DO UPDATE SET qr_style_json = excluded.qr_style_json, qr_logo_json = excluded.qr_logo_json;
DROP TABLE qr_styles;
