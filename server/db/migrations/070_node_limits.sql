-- Node limits (issue 17 item 3, docs/api.md "Node limits"): when a node expires, how many counted
-- scans it serves, a password (scrypt hash, never the password) in front of its content, and what a
-- scan gets once expired or used up (after_limit_json; NULL = the 410 page).
ALTER TABLE nodes ADD COLUMN expires_at TEXT;
ALTER TABLE nodes ADD COLUMN max_scans INTEGER;
ALTER TABLE nodes ADD COLUMN password_hash TEXT;
ALTER TABLE nodes ADD COLUMN after_limit_json TEXT;

-- What a scan serves depends on them: the scan cache is dropped when they change.
DROP TRIGGER scan_cache_nodes_upd;
CREATE TRIGGER scan_cache_nodes_upd AFTER UPDATE OF id, org_id, slug, function_type, payload_json, status, expires_at, max_scans, password_hash, after_limit_json ON nodes
BEGIN UPDATE scan_cache_epoch SET epoch = epoch + 1 WHERE id = 1; END;

-- Synced like every other node field (a site offline enforces the limits itself).
DROP TRIGGER sync_nodes_ins;
CREATE TRIGGER sync_nodes_ins AFTER INSERT ON nodes BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  VALUES (NEW.org_id, 'node', NEW.id, 'upsert', json_object('slug', NEW.slug, 'label', NEW.label, 'function_type', NEW.function_type, 'payload_json', NEW.payload_json, 'status', NEW.status, 'hardware_id', NEW.hardware_id, 'template_id', NEW.template_id, 'batch_id', NEW.batch_id, 'serial', NEW.serial, 'serial_number', NEW.serial_number, 'created_at', NEW.created_at, 'updated_at', NEW.updated_at,
                                                           'expires_at', NEW.expires_at, 'max_scans', NEW.max_scans, 'password_hash', NEW.password_hash, 'after_limit_json', NEW.after_limit_json,
                                                           'minted_at', (SELECT minted_at FROM slugs WHERE slug = NEW.slug)),
          waymark_hlc(), waymark_writer(), waymark_group(), NEW.batch_id, waymark_sync_applying(), waymark_sync_applying());
END;
DROP TRIGGER sync_nodes_upd;
CREATE TRIGGER sync_nodes_upd AFTER UPDATE OF slug, label, function_type, payload_json, status, hardware_id, template_id, batch_id, serial, serial_number, created_at, updated_at, expires_at, max_scans, password_hash, after_limit_json ON nodes BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  SELECT NEW.org_id, 'node', NEW.id, 'upsert', d.f, waymark_hlc(), waymark_writer(), waymark_group(), NEW.batch_id, waymark_sync_applying(), waymark_sync_applying()
    FROM (SELECT waymark_diff(json_object('slug', OLD.slug, 'label', OLD.label, 'function_type', OLD.function_type, 'payload_json', OLD.payload_json, 'status', OLD.status, 'hardware_id', OLD.hardware_id, 'template_id', OLD.template_id, 'batch_id', OLD.batch_id, 'serial', OLD.serial, 'serial_number', OLD.serial_number, 'created_at', OLD.created_at, 'updated_at', OLD.updated_at,
                                          'expires_at', OLD.expires_at, 'max_scans', OLD.max_scans, 'password_hash', OLD.password_hash, 'after_limit_json', OLD.after_limit_json),
                              json_object('slug', NEW.slug, 'label', NEW.label, 'function_type', NEW.function_type, 'payload_json', NEW.payload_json, 'status', NEW.status, 'hardware_id', NEW.hardware_id, 'template_id', NEW.template_id, 'batch_id', NEW.batch_id, 'serial', NEW.serial, 'serial_number', NEW.serial_number, 'created_at', NEW.created_at, 'updated_at', NEW.updated_at,
                                          'expires_at', NEW.expires_at, 'max_scans', NEW.max_scans, 'password_hash', NEW.password_hash, 'after_limit_json', NEW.after_limit_json)) AS f) d
   WHERE d.f IS NOT NULL;
END;
