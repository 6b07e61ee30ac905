-- Node limits (issue 17 item 3; SQLite migration 068): expiry, a scan limit, a password (scrypt
-- hash) and what a scan gets afterwards (after_limit_json; NULL = the 410 page).
ALTER TABLE nodes ADD COLUMN expires_at TEXT;
ALTER TABLE nodes ADD COLUMN max_scans INTEGER;
ALTER TABLE nodes ADD COLUMN password_hash TEXT;
ALTER TABLE nodes ADD COLUMN after_limit_json TEXT;

-- What a scan serves depends on them: the scan cache is dropped when they change.
DROP TRIGGER scan_cache_nodes ON nodes;
CREATE TRIGGER scan_cache_nodes AFTER INSERT OR DELETE OR UPDATE OF id, org_id, slug, function_type, payload_json, status, expires_at, max_scans, password_hash, after_limit_json ON nodes
  FOR EACH STATEMENT EXECUTE FUNCTION waymark_scan_cache_bump();

-- Synced like every other node field (a site offline enforces the limits itself).
DROP TRIGGER sync_nodes ON nodes;
CREATE TRIGGER sync_nodes AFTER INSERT OR DELETE OR UPDATE OF slug, label, function_type, payload_json, status, hardware_id, template_id, batch_id, serial, serial_number, created_at, updated_at, expires_at, max_scans, password_hash, after_limit_json ON nodes
  FOR EACH ROW EXECUTE FUNCTION waymark_sync_capture('node', 'slug', 'label', 'function_type', 'payload_json', 'status', 'hardware_id', 'template_id', 'batch_id', 'serial', 'serial_number', 'created_at', 'updated_at', 'expires_at', 'max_scans', 'password_hash', 'after_limit_json');
