-- The scan writer caches, per organization, whether an endpoint subscribes to node.scanned
-- (scans/writer.ts): the check is a json_each over the organization's webhooks, ~20 µs, and it ran
-- once per group commit. The cache is dropped when scan_cache_epoch moves, which it now also does
-- when a webhook is created, deleted or changes its organization or events. The writer reads the
-- epoch inside its write transaction, so an endpoint committed before a batch gets its events.
CREATE TRIGGER scan_cache_webhooks_ins AFTER INSERT ON webhooks
BEGIN UPDATE scan_cache_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER scan_cache_webhooks_del AFTER DELETE ON webhooks
BEGIN UPDATE scan_cache_epoch SET epoch = epoch + 1 WHERE id = 1; END;
CREATE TRIGGER scan_cache_webhooks_upd AFTER UPDATE OF org_id, events_json ON webhooks
BEGIN UPDATE scan_cache_epoch SET epoch = epoch + 1 WHERE id = 1; END;
