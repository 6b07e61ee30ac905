-- The scan cache epoch moves at commit, once per transaction. Bumped by ordinary triggers, the one
-- epoch row was a lock held by every writer of nodes, rules, slugs and webhooks from its first
-- such write to its commit, while it went on taking other locks: two sync pushes applied at once
-- deadlocked (one held the epoch and waited for an entity or serial lock the other held while it
-- waited for the epoch). Deferred constraint triggers take the epoch last, when no other lock is
-- wanted any more; readers see the epoch move at commit as before.
CREATE OR REPLACE FUNCTION waymark_scan_cache_bump() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  moved BIGINT;
BEGIN
  -- Row-level (constraint triggers are): the first event of the transaction bumps, the rest skip.
  IF current_setting('waymark.scan_cache_bumped', true) = 'yes' THEN
    RETURN NULL;
  END IF;
  PERFORM set_config('waymark.scan_cache_bumped', 'yes', true);
  UPDATE scan_cache_epoch SET epoch = epoch + 1 WHERE id = 1 RETURNING epoch INTO moved;
  PERFORM pg_notify('waymark_scan_cache', moved::text);
  RETURN NULL;
END $$;

DROP TRIGGER scan_cache_nodes ON nodes;
DROP TRIGGER scan_cache_rules ON rules;
DROP TRIGGER scan_cache_slugs ON slugs;
DROP TRIGGER scan_cache_webhooks ON webhooks;
CREATE CONSTRAINT TRIGGER scan_cache_nodes AFTER INSERT OR DELETE OR UPDATE OF id, org_id, slug, function_type, payload_json, status, expires_at, max_scans, password_hash, after_limit_json ON nodes
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION waymark_scan_cache_bump();
CREATE CONSTRAINT TRIGGER scan_cache_rules AFTER INSERT OR DELETE OR UPDATE ON rules
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION waymark_scan_cache_bump();
CREATE CONSTRAINT TRIGGER scan_cache_slugs AFTER INSERT OR DELETE OR UPDATE ON slugs
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION waymark_scan_cache_bump();
CREATE CONSTRAINT TRIGGER scan_cache_webhooks AFTER INSERT OR DELETE OR UPDATE OF org_id, events_json ON webhooks
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION waymark_scan_cache_bump();
