-- migrate: foreign_keys off
-- Sync, second slice: change capture, versions and tombstones for push/pull (docs/sync.md).
--
-- Batch serials stop being unique per organization: two offline sites using the same prefix
-- print the same serial labels, and the remote must keep both (tags are already printed; the
-- clash is logged as serial_clash). SQLite cannot drop a table constraint, so nodes is rebuilt
-- (foreign keys off for this migration, see migrate.ts) with the same columns, indexes and
-- triggers, and a plain index on (org_id, serial).
CREATE TABLE nodes_new (
  id            TEXT PRIMARY KEY,
  org_id        TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  slug          TEXT NOT NULL UNIQUE,
  label         TEXT NOT NULL,
  function_type TEXT NOT NULL,
  payload_json  TEXT NOT NULL,
  status        TEXT NOT NULL,
  hardware_id   TEXT,
  scan_count    INTEGER NOT NULL DEFAULT 0,
  template_id   TEXT REFERENCES templates(id) ON DELETE SET NULL,
  batch_id      TEXT REFERENCES batches(id) ON DELETE SET NULL,
  serial        TEXT,
  serial_number INTEGER,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
INSERT INTO nodes_new (id, org_id, slug, label, function_type, payload_json, status, hardware_id, scan_count, template_id, batch_id, serial, serial_number, created_at, updated_at)
  SELECT id, org_id, slug, label, function_type, payload_json, status, hardware_id, scan_count, template_id, batch_id, serial, serial_number, created_at, updated_at FROM nodes;
DROP TABLE nodes;
ALTER TABLE nodes_new RENAME TO nodes;
CREATE INDEX nodes_org_created ON nodes(org_id, created_at);
CREATE INDEX nodes_org_status ON nodes(org_id, status, created_at DESC);
CREATE INDEX nodes_org_type ON nodes(org_id, function_type, created_at DESC);
CREATE INDEX nodes_batch ON nodes(batch_id, serial_number);
CREATE INDEX nodes_template ON nodes(template_id);
CREATE UNIQUE INDEX nodes_hardware ON nodes(org_id, hardware_id) WHERE hardware_id IS NOT NULL;
CREATE INDEX nodes_serial ON nodes(org_id, serial) WHERE serial IS NOT NULL;
CREATE TRIGGER scan_cache_nodes_ins AFTER INSERT ON nodes
BEGIN UPDATE scan_cache_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER scan_cache_nodes_del AFTER DELETE ON nodes
BEGIN UPDATE scan_cache_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER scan_cache_nodes_upd AFTER UPDATE OF id, org_id, slug, function_type, payload_json, status ON nodes
BEGIN UPDATE scan_cache_epoch SET epoch = epoch + 1 WHERE id = 1; END;

--
-- Every write to a synced table appends to sync_outbox through the triggers below, whichever code
-- path made it, in the same transaction. The triggers call SQL functions registered on every
-- connection by openDatabase (server/db/capture.ts):
--   waymark_hlc()            the next hybrid logical clock value (or, while applying a remote
--                            change, that change's own HLC)
--   waymark_writer()         the writer id site_id/incarnation (or the change's origin writer)
--   waymark_group()          one id per transaction: the rows of one transaction travel together
--   waymark_sync_applying()  1 while pull applies remote rows (they are recorded as already pushed)
--   waymark_diff(old, new)   the JSON of the fields that changed, NULL when none did
-- On a remote the same table is the change feed sites pull from.
CREATE TABLE sync_outbox (
  seq       INTEGER PRIMARY KEY AUTOINCREMENT,
  org_id    TEXT,                     -- the organization the row belongs to (the feed is per organization)
  entity    TEXT NOT NULL,            -- node | rule | template | webhook | batch | api_key
  entity_id TEXT NOT NULL,
  op        TEXT NOT NULL,            -- upsert | delete
  fields    TEXT NOT NULL,            -- JSON {field: value}: all fields on insert, the changed ones on update
  hlc       TEXT NOT NULL,
  writer    TEXT NOT NULL,
  group_id  TEXT,
  hold      TEXT,                     -- batch id: a batch's rows are pushed together once it is ready
  pushed    INTEGER NOT NULL DEFAULT 0,
  pulled    INTEGER NOT NULL DEFAULT 0 -- applied from the remote's feed (never pushed back)
);
CREATE INDEX sync_outbox_pending ON sync_outbox(seq) WHERE pushed = 0;
CREATE INDEX sync_outbox_hold ON sync_outbox(hold, seq) WHERE hold IS NOT NULL;
CREATE INDEX sync_outbox_group ON sync_outbox(group_id, seq);
CREATE INDEX sync_outbox_feed ON sync_outbox(org_id, seq);

-- Field-level last-writer-wins: the version (hlc, writer) of every field's current value.
CREATE TABLE sync_versions (
  entity    TEXT NOT NULL,
  entity_id TEXT NOT NULL,
  field     TEXT NOT NULL,
  hlc       TEXT NOT NULL,
  writer    TEXT NOT NULL,
  PRIMARY KEY (entity, entity_id, field)
) WITHOUT ROWID;

-- Delete is final: an entity deleted anywhere stays deleted; later edits go to the conflict log.
CREATE TABLE sync_tombstones (
  entity    TEXT NOT NULL,
  entity_id TEXT NOT NULL,
  hlc       TEXT NOT NULL,
  writer    TEXT NOT NULL,
  PRIMARY KEY (entity, entity_id)
) WITHOUT ROWID;

CREATE TRIGGER sync_outbox_versions AFTER INSERT ON sync_outbox WHEN NEW.op = 'upsert' BEGIN
  INSERT INTO sync_versions (entity, entity_id, field, hlc, writer)
  SELECT NEW.entity, NEW.entity_id, j.key, NEW.hlc, NEW.writer FROM json_each(NEW.fields) j WHERE true
  ON CONFLICT (entity, entity_id, field) DO UPDATE SET hlc = excluded.hlc, writer = excluded.writer
   WHERE excluded.hlc > sync_versions.hlc OR (excluded.hlc = sync_versions.hlc AND excluded.writer > sync_versions.writer);
END;
CREATE TRIGGER sync_outbox_tombstones AFTER INSERT ON sync_outbox WHEN NEW.op = 'delete' BEGIN
  INSERT OR IGNORE INTO sync_tombstones (entity, entity_id, hlc, writer) VALUES (NEW.entity, NEW.entity_id, NEW.hlc, NEW.writer);
  DELETE FROM sync_versions WHERE entity = NEW.entity AND entity_id = NEW.entity_id;
END;

-- Remote side: how far each site incarnation's push has been applied (pushes are idempotent by seq).
CREATE TABLE sync_push_state (
  site_id     TEXT NOT NULL,
  incarnation TEXT NOT NULL,
  last_seq    INTEGER NOT NULL,
  PRIMARY KEY (site_id, incarnation)
);

-- Scans are not captured by a trigger (the scan writer is the hot path and runs on its own
-- connection): a site pushes scan_events after a watermark. A scan's global id is
-- "<writer>:<local id>", the writer being the incarnation that recorded it: sync_scan_epochs
-- says from which local id on each incarnation recorded. The remote stores it in sync_id and
-- inserts a pushed scan at most once.
CREATE TABLE sync_scan_epochs (
  first_id INTEGER PRIMARY KEY,
  writer   TEXT NOT NULL
);
ALTER TABLE scan_events ADD COLUMN sync_id TEXT;
CREATE UNIQUE INDEX scan_events_sync_id ON scan_events(sync_id) WHERE sync_id IS NOT NULL;

-- node: nodes
CREATE TRIGGER sync_nodes_ins AFTER INSERT ON nodes BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  VALUES (NEW.org_id, 'node', NEW.id, 'upsert', json_object('slug', NEW.slug, 'label', NEW.label, 'function_type', NEW.function_type, 'payload_json', NEW.payload_json, 'status', NEW.status, 'hardware_id', NEW.hardware_id, 'template_id', NEW.template_id, 'batch_id', NEW.batch_id, 'serial', NEW.serial, 'serial_number', NEW.serial_number, 'created_at', NEW.created_at, 'updated_at', NEW.updated_at),
          waymark_hlc(), waymark_writer(), waymark_group(), NEW.batch_id, waymark_sync_applying(), waymark_sync_applying());
END;
CREATE TRIGGER sync_nodes_upd AFTER UPDATE OF slug, label, function_type, payload_json, status, hardware_id, template_id, batch_id, serial, serial_number, created_at, updated_at ON nodes BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  SELECT NEW.org_id, 'node', NEW.id, 'upsert', d.f, waymark_hlc(), waymark_writer(), waymark_group(), NEW.batch_id, waymark_sync_applying(), waymark_sync_applying()
    FROM (SELECT waymark_diff(json_object('slug', OLD.slug, 'label', OLD.label, 'function_type', OLD.function_type, 'payload_json', OLD.payload_json, 'status', OLD.status, 'hardware_id', OLD.hardware_id, 'template_id', OLD.template_id, 'batch_id', OLD.batch_id, 'serial', OLD.serial, 'serial_number', OLD.serial_number, 'created_at', OLD.created_at, 'updated_at', OLD.updated_at),
                              json_object('slug', NEW.slug, 'label', NEW.label, 'function_type', NEW.function_type, 'payload_json', NEW.payload_json, 'status', NEW.status, 'hardware_id', NEW.hardware_id, 'template_id', NEW.template_id, 'batch_id', NEW.batch_id, 'serial', NEW.serial, 'serial_number', NEW.serial_number, 'created_at', NEW.created_at, 'updated_at', NEW.updated_at)) AS f) d
   WHERE d.f IS NOT NULL;
END;
CREATE TRIGGER sync_nodes_del AFTER DELETE ON nodes BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  VALUES (OLD.org_id, 'node', OLD.id, 'delete', json_object('slug', OLD.slug), waymark_hlc(), waymark_writer(), waymark_group(), OLD.batch_id, waymark_sync_applying(), waymark_sync_applying());
END;

-- rule: rules
CREATE TRIGGER sync_rules_ins AFTER INSERT ON rules BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  VALUES ((SELECT org_id FROM nodes WHERE id = NEW.node_id), 'rule', NEW.id, 'upsert', json_object('node_id', NEW.node_id, 'rule_type', NEW.rule_type, 'conditions_json', NEW.conditions_json, 'function_type', NEW.function_type, 'payload_json', NEW.payload_json, 'priority', NEW.priority, 'enabled', NEW.enabled, 'created_at', NEW.created_at, 'updated_at', NEW.updated_at),
          waymark_hlc(), waymark_writer(), waymark_group(), NULL, waymark_sync_applying(), waymark_sync_applying());
END;
CREATE TRIGGER sync_rules_upd AFTER UPDATE OF node_id, rule_type, conditions_json, function_type, payload_json, priority, enabled, created_at, updated_at ON rules BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  SELECT (SELECT org_id FROM nodes WHERE id = NEW.node_id), 'rule', NEW.id, 'upsert', d.f, waymark_hlc(), waymark_writer(), waymark_group(), NULL, waymark_sync_applying(), waymark_sync_applying()
    FROM (SELECT waymark_diff(json_object('node_id', OLD.node_id, 'rule_type', OLD.rule_type, 'conditions_json', OLD.conditions_json, 'function_type', OLD.function_type, 'payload_json', OLD.payload_json, 'priority', OLD.priority, 'enabled', OLD.enabled, 'created_at', OLD.created_at, 'updated_at', OLD.updated_at),
                              json_object('node_id', NEW.node_id, 'rule_type', NEW.rule_type, 'conditions_json', NEW.conditions_json, 'function_type', NEW.function_type, 'payload_json', NEW.payload_json, 'priority', NEW.priority, 'enabled', NEW.enabled, 'created_at', NEW.created_at, 'updated_at', NEW.updated_at)) AS f) d
   WHERE d.f IS NOT NULL;
END;
CREATE TRIGGER sync_rules_del AFTER DELETE ON rules BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  VALUES ((SELECT org_id FROM nodes WHERE id = OLD.node_id), 'rule', OLD.id, 'delete', json_object('node_id', OLD.node_id), waymark_hlc(), waymark_writer(), waymark_group(), NULL, waymark_sync_applying(), waymark_sync_applying());
END;

-- template: templates
CREATE TRIGGER sync_templates_ins AFTER INSERT ON templates BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  VALUES (NEW.org_id, 'template', NEW.id, 'upsert', json_object('name', NEW.name, 'function_type', NEW.function_type, 'payload_json', NEW.payload_json, 'locked_fields_json', NEW.locked_fields_json, 'created_at', NEW.created_at, 'updated_at', NEW.updated_at),
          waymark_hlc(), waymark_writer(), waymark_group(), NULL, waymark_sync_applying(), waymark_sync_applying());
END;
CREATE TRIGGER sync_templates_upd AFTER UPDATE OF name, function_type, payload_json, locked_fields_json, created_at, updated_at ON templates BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  SELECT NEW.org_id, 'template', NEW.id, 'upsert', d.f, waymark_hlc(), waymark_writer(), waymark_group(), NULL, waymark_sync_applying(), waymark_sync_applying()
    FROM (SELECT waymark_diff(json_object('name', OLD.name, 'function_type', OLD.function_type, 'payload_json', OLD.payload_json, 'locked_fields_json', OLD.locked_fields_json, 'created_at', OLD.created_at, 'updated_at', OLD.updated_at),
                              json_object('name', NEW.name, 'function_type', NEW.function_type, 'payload_json', NEW.payload_json, 'locked_fields_json', NEW.locked_fields_json, 'created_at', NEW.created_at, 'updated_at', NEW.updated_at)) AS f) d
   WHERE d.f IS NOT NULL;
END;
CREATE TRIGGER sync_templates_del AFTER DELETE ON templates BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  VALUES (OLD.org_id, 'template', OLD.id, 'delete', '{}', waymark_hlc(), waymark_writer(), waymark_group(), NULL, waymark_sync_applying(), waymark_sync_applying());
END;

-- webhook: webhooks
CREATE TRIGGER sync_webhooks_ins AFTER INSERT ON webhooks BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  VALUES (NEW.org_id, 'webhook', NEW.id, 'upsert', json_object('url', NEW.url, 'events_json', NEW.events_json, 'description', NEW.description, 'active', NEW.active, 'secret', NEW.secret, 'previous_secret', NEW.previous_secret, 'previous_secret_expires_at', NEW.previous_secret_expires_at, 'created_at', NEW.created_at, 'updated_at', NEW.updated_at),
          waymark_hlc(), waymark_writer(), waymark_group(), NULL, waymark_sync_applying(), waymark_sync_applying());
END;
CREATE TRIGGER sync_webhooks_upd AFTER UPDATE OF url, events_json, description, active, secret, previous_secret, previous_secret_expires_at, created_at, updated_at ON webhooks BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  SELECT NEW.org_id, 'webhook', NEW.id, 'upsert', d.f, waymark_hlc(), waymark_writer(), waymark_group(), NULL, waymark_sync_applying(), waymark_sync_applying()
    FROM (SELECT waymark_diff(json_object('url', OLD.url, 'events_json', OLD.events_json, 'description', OLD.description, 'active', OLD.active, 'secret', OLD.secret, 'previous_secret', OLD.previous_secret, 'previous_secret_expires_at', OLD.previous_secret_expires_at, 'created_at', OLD.created_at, 'updated_at', OLD.updated_at),
                              json_object('url', NEW.url, 'events_json', NEW.events_json, 'description', NEW.description, 'active', NEW.active, 'secret', NEW.secret, 'previous_secret', NEW.previous_secret, 'previous_secret_expires_at', NEW.previous_secret_expires_at, 'created_at', NEW.created_at, 'updated_at', NEW.updated_at)) AS f) d
   WHERE d.f IS NOT NULL;
END;
CREATE TRIGGER sync_webhooks_del AFTER DELETE ON webhooks BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  VALUES (OLD.org_id, 'webhook', OLD.id, 'delete', '{}', waymark_hlc(), waymark_writer(), waymark_group(), NULL, waymark_sync_applying(), waymark_sync_applying());
END;

-- batch: batches
CREATE TRIGGER sync_batches_ins AFTER INSERT ON batches BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  VALUES (NEW.org_id, 'batch', NEW.id, 'upsert', json_object('label', NEW.label, 'prefix', NEW.prefix, 'quantity', NEW.quantity, 'serial_start', NEW.serial_start, 'function_type', NEW.function_type, 'base_payload_json', NEW.base_payload_json, 'template_id', NEW.template_id, 'created_at', NEW.created_at),
          waymark_hlc(), waymark_writer(), waymark_group(), NEW.id, waymark_sync_applying(), waymark_sync_applying());
END;
CREATE TRIGGER sync_batches_upd AFTER UPDATE OF label, prefix, quantity, serial_start, function_type, base_payload_json, template_id, created_at ON batches BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  SELECT NEW.org_id, 'batch', NEW.id, 'upsert', d.f, waymark_hlc(), waymark_writer(), waymark_group(), NEW.id, waymark_sync_applying(), waymark_sync_applying()
    FROM (SELECT waymark_diff(json_object('label', OLD.label, 'prefix', OLD.prefix, 'quantity', OLD.quantity, 'serial_start', OLD.serial_start, 'function_type', OLD.function_type, 'base_payload_json', OLD.base_payload_json, 'template_id', OLD.template_id, 'created_at', OLD.created_at),
                              json_object('label', NEW.label, 'prefix', NEW.prefix, 'quantity', NEW.quantity, 'serial_start', NEW.serial_start, 'function_type', NEW.function_type, 'base_payload_json', NEW.base_payload_json, 'template_id', NEW.template_id, 'created_at', NEW.created_at)) AS f) d
   WHERE d.f IS NOT NULL;
END;
CREATE TRIGGER sync_batches_del AFTER DELETE ON batches BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  VALUES (OLD.org_id, 'batch', OLD.id, 'delete', '{}', waymark_hlc(), waymark_writer(), waymark_group(), OLD.id, waymark_sync_applying(), waymark_sync_applying());
END;

-- api_key: api_keys
CREATE TRIGGER sync_api_keys_ins AFTER INSERT ON api_keys BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  VALUES (NEW.org_id, 'api_key', NEW.id, 'upsert', json_object('name', NEW.name, 'prefix', NEW.prefix, 'key_hash', NEW.key_hash, 'plan', NEW.plan, 'limits_json', NEW.limits_json, 'created_at', NEW.created_at, 'revoked_at', NEW.revoked_at),
          waymark_hlc(), waymark_writer(), waymark_group(), NULL, 1, waymark_sync_applying());
END;
CREATE TRIGGER sync_api_keys_upd AFTER UPDATE OF name, prefix, key_hash, plan, limits_json, created_at, revoked_at ON api_keys BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  SELECT NEW.org_id, 'api_key', NEW.id, 'upsert', d.f, waymark_hlc(), waymark_writer(), waymark_group(), NULL, 1, waymark_sync_applying()
    FROM (SELECT waymark_diff(json_object('name', OLD.name, 'prefix', OLD.prefix, 'key_hash', OLD.key_hash, 'plan', OLD.plan, 'limits_json', OLD.limits_json, 'created_at', OLD.created_at, 'revoked_at', OLD.revoked_at),
                              json_object('name', NEW.name, 'prefix', NEW.prefix, 'key_hash', NEW.key_hash, 'plan', NEW.plan, 'limits_json', NEW.limits_json, 'created_at', NEW.created_at, 'revoked_at', NEW.revoked_at)) AS f) d
   WHERE d.f IS NOT NULL;
END;
CREATE TRIGGER sync_api_keys_del AFTER DELETE ON api_keys BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  VALUES (OLD.org_id, 'api_key', OLD.id, 'delete', '{}', waymark_hlc(), waymark_writer(), waymark_group(), NULL, 1, waymark_sync_applying());
END;

-- What exists before this migration is recorded once as created, so it travels like later
-- writes: a standalone instance paired later pushes its data, a remote's data enters its feed.
INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  SELECT org_id, 'template', id, 'upsert', json_object('name', name, 'function_type', function_type, 'payload_json', payload_json, 'locked_fields_json', locked_fields_json, 'created_at', created_at, 'updated_at', updated_at),
         waymark_hlc(), waymark_writer(), NULL, NULL, 0, 0
    FROM templates ORDER BY created_at, id;
INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  SELECT org_id, 'batch', id, 'upsert', json_object('label', label, 'prefix', prefix, 'quantity', quantity, 'serial_start', serial_start, 'function_type', function_type, 'base_payload_json', base_payload_json, 'template_id', template_id, 'created_at', created_at),
         waymark_hlc(), waymark_writer(), NULL, id, 0, 0
    FROM batches ORDER BY created_at, id;
INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  SELECT org_id, 'node', id, 'upsert', json_object('slug', slug, 'label', label, 'function_type', function_type, 'payload_json', payload_json, 'status', status, 'hardware_id', hardware_id, 'template_id', template_id, 'batch_id', batch_id, 'serial', serial, 'serial_number', serial_number, 'created_at', created_at, 'updated_at', updated_at),
         waymark_hlc(), waymark_writer(), NULL, batch_id, 0, 0
    FROM nodes ORDER BY created_at, id;
INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  SELECT (SELECT org_id FROM nodes WHERE nodes.id = rules.node_id), 'rule', id, 'upsert', json_object('node_id', node_id, 'rule_type', rule_type, 'conditions_json', conditions_json, 'function_type', function_type, 'payload_json', payload_json, 'priority', priority, 'enabled', enabled, 'created_at', created_at, 'updated_at', updated_at),
         waymark_hlc(), waymark_writer(), NULL, NULL, 0, 0
    FROM rules ORDER BY created_at, id;
INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  SELECT org_id, 'webhook', id, 'upsert', json_object('url', url, 'events_json', events_json, 'description', description, 'active', active, 'secret', secret, 'previous_secret', previous_secret, 'previous_secret_expires_at', previous_secret_expires_at, 'created_at', created_at, 'updated_at', updated_at),
         waymark_hlc(), waymark_writer(), NULL, NULL, 0, 0
    FROM webhooks ORDER BY created_at, id;
INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  SELECT org_id, 'api_key', id, 'upsert', json_object('name', name, 'prefix', prefix, 'key_hash', key_hash, 'plan', plan, 'limits_json', limits_json, 'created_at', created_at, 'revoked_at', revoked_at),
         waymark_hlc(), waymark_writer(), NULL, NULL, 1, 0
    FROM api_keys ORDER BY created_at, id;

-- Conflicts can be marked seen (POST /v1/sync/conflicts/{id}/resolve); they then leave the status.
ALTER TABLE sync_conflicts ADD COLUMN resolved_at TEXT;
