-- Sync change capture on PostgreSQL: the same sync_outbox rows, versions and tombstones as the
-- SQLite triggers of migrations 055, 056, 058, 059 and 061 (docs/sync.md, "How changes are
-- captured"), written in PL/pgSQL since PostgreSQL cannot call the JavaScript functions SQLite
-- triggers call (server/db/capture.ts).
--
-- What the application says about a transaction comes in transaction-local settings, set at its
-- start by the store's start hook (server/db/changeCapture.ts) and while applying a remote change:
--   waymark.writer          this instance's writer id (site_id/incarnation); if unset, the one in
--                           settings, else 'unpaired'
--   waymark.group           the transaction's sync group; the transaction id if unset
--   waymark.hlc_base        an HLC from the process's clock: no local change of the transaction
--                           gets a lower one (the app's injected clock, and what the process received)
--   waymark.applying_writer / waymark.applying_hlc
--                           set while a remote change is applied: rows carry its origin and are
--                           recorded as already pushed and pulled
--
-- Many processes write one database, so two things the single SQLite writer gave for free are
-- made explicit, both at commit (the deferred trigger sync_outbox_seal):
--   * seq is commit order. Rows get a provisional negative seq while the transaction runs; at
--     commit they are numbered under a lock on sync_clock, held until the commit is visible. A
--     reader of the feed by seq (a site's pull, a site's push queue) can never see seq n+1 while
--     an earlier-committing row n is still invisible, so a cursor never skips a row.
--   * local HLCs are unique and monotonic across processes. They are handed out at commit under
--     the same lock from the database-wide clock (sync_clock): above every HLC any process handed
--     out or received before, at least waymark.hlc_base, and increasing within the transaction.
--     Processes share the instance's writer id, so (hlc, writer) never repeats for two changes,
--     and a later write of a field always carries the greater version.

-- HLCs and writer ids are compared as strings in the last-writer-wins order (platform/hlc.ts):
-- byte order, whatever the database's collation.
ALTER TABLE sync_outbox ALTER COLUMN hlc TYPE TEXT COLLATE "C", ALTER COLUMN writer TYPE TEXT COLLATE "C";
ALTER TABLE sync_versions ALTER COLUMN hlc TYPE TEXT COLLATE "C", ALTER COLUMN writer TYPE TEXT COLLATE "C";
ALTER TABLE sync_tombstones ALTER COLUMN hlc TYPE TEXT COLLATE "C", ALTER COLUMN writer TYPE TEXT COLLATE "C";
ALTER TABLE sync_unapplied ALTER COLUMN hlc TYPE TEXT COLLATE "C", ALTER COLUMN writer TYPE TEXT COLLATE "C";

-- Provisional seqs (negative, in insertion order) and the final ones, handed out at commit.
ALTER TABLE sync_outbox ALTER COLUMN seq DROP IDENTITY IF EXISTS;
CREATE SEQUENCE sync_outbox_provisional;
CREATE SEQUENCE sync_outbox_seq;
ALTER TABLE sync_outbox ALTER COLUMN seq SET DEFAULT -nextval('sync_outbox_provisional');

-- The database-wide hybrid logical clock (an HLC as a 64-bit integer: milliseconds << 16 | counter).
CREATE TABLE sync_clock (
  id  INTEGER PRIMARY KEY CHECK (id = 1),
  hlc BIGINT NOT NULL
);
INSERT INTO sync_clock (id, hlc) VALUES (1, 0);

CREATE FUNCTION waymark_hlc_int(h TEXT) RETURNS BIGINT LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN h ~ '^[0-9a-f]{16}$' THEN ('x' || h)::bit(64)::bigint END
$$;
CREATE FUNCTION waymark_hlc_text(v BIGINT) RETURNS TEXT LANGUAGE sql IMMUTABLE AS $$
  SELECT lpad(to_hex(v), 16, '0')
$$;

-- The fields of `after` that differ from `before` (waymark_diff of the SQLite triggers); NULL when none do.
CREATE FUNCTION waymark_diff(before JSONB, after JSONB) RETURNS JSONB LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_object_agg(a.key, a.value) FROM jsonb_each(after) a WHERE (before -> a.key) IS DISTINCT FROM a.value
$$;

-- The listed columns of a row, as JSON (SQL NULL stays a JSON null, as json_object does).
CREATE FUNCTION waymark_pick(r JSONB, cols TEXT[]) RETURNS JSONB LANGUAGE sql IMMUTABLE AS $$
  SELECT jsonb_object_agg(c, COALESCE(r -> c, 'null'::jsonb)) FROM unnest(cols) c
$$;

-- Versions and tombstones of one outbox row (the SQLite triggers sync_outbox_versions and
-- sync_outbox_tombstones): run at insert for applied rows, whose HLC is known, and at commit for local ones.
CREATE FUNCTION waymark_sync_record(p_op TEXT, p_entity TEXT, p_id TEXT, p_fields TEXT, p_hlc TEXT, p_writer TEXT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF p_op = 'upsert' THEN
    INSERT INTO sync_versions (entity, entity_id, field, hlc, writer)
    SELECT p_entity, p_id, k, p_hlc, p_writer FROM jsonb_object_keys(p_fields::jsonb) k
    ON CONFLICT (entity, entity_id, field) DO UPDATE SET hlc = excluded.hlc, writer = excluded.writer
     WHERE excluded.hlc > sync_versions.hlc OR (excluded.hlc = sync_versions.hlc AND excluded.writer > sync_versions.writer);
  ELSE
    INSERT INTO sync_tombstones (entity, entity_id, hlc, writer, parent_id)
    VALUES (p_entity, p_id, p_hlc, p_writer, CASE WHEN p_entity = 'rule' THEN p_fields::jsonb ->> 'node_id' END)
    ON CONFLICT (entity, entity_id) DO NOTHING;
    DELETE FROM sync_versions WHERE entity = p_entity AND entity_id = p_id;
  END IF;
END $$;

-- Fills in what the transaction's context says: writer, HLC (applied rows only; local rows get
-- theirs at commit and carry '' until then), group, and the pushed/pulled flags of applied rows.
CREATE FUNCTION waymark_sync_outbox_fill() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  applying TEXT := NULLIF(current_setting('waymark.applying_hlc', true), '');
BEGIN
  IF NEW.seq > 0 THEN
    RETURN NEW; -- an explicit seq: a row copied in as it was (e.g. moving a SQLite remote here)
  END IF;
  IF applying IS NOT NULL THEN
    NEW.hlc := applying;
    NEW.writer := current_setting('waymark.applying_writer', true);
    NEW.pushed := 1;
    NEW.pulled := 1;
  ELSE
    NEW.hlc := '';
    -- Outside the app's transactions (the CLI, a single statement on the pool) the instance's
    -- writer id comes from its settings, as SQLite's capture loads it at open (capture.ts).
    NEW.writer := COALESCE(NULLIF(current_setting('waymark.writer', true), ''),
                           (SELECT s.value || '/' || i.value FROM settings s, settings i WHERE s.key = 'sync.site_id' AND i.key = 'sync.incarnation'),
                           'unpaired');
  END IF;
  NEW.group_id := COALESCE(NULLIF(current_setting('waymark.group', true), ''), 'x' || pg_current_xact_id()::text);
  RETURN NEW;
END $$;
CREATE TRIGGER sync_outbox_fill BEFORE INSERT ON sync_outbox FOR EACH ROW EXECUTE FUNCTION waymark_sync_outbox_fill();

CREATE FUNCTION waymark_sync_outbox_applied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM waymark_sync_record(NEW.op, NEW.entity, NEW.entity_id, NEW.fields, NEW.hlc, NEW.writer);
  RETURN NULL;
END $$;
CREATE TRIGGER sync_outbox_applied AFTER INSERT ON sync_outbox FOR EACH ROW WHEN (NEW.seq < 0 AND NEW.hlc <> '')
  EXECUTE FUNCTION waymark_sync_outbox_applied();

-- At commit, once per transaction: final seqs in insertion order, HLCs of local rows, their
-- versions and tombstones, and the clock moved past everything this transaction recorded.
CREATE FUNCTION waymark_sync_outbox_seal() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  base  BIGINT;
  clock BIGINT;
  next  BIGINT;
  top   BIGINT;
  r     RECORD;
  o     RECORD;
BEGIN
  IF current_setting('waymark.sealed', true) = pg_current_xact_id()::text THEN
    RETURN NULL;
  END IF;
  PERFORM set_config('waymark.sealed', pg_current_xact_id()::text, true);
  base := COALESCE(waymark_hlc_int(NULLIF(current_setting('waymark.hlc_base', true), '')),
                   (floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) << 16);
  -- The lock that makes seq commit order: held until this transaction's commit is visible.
  UPDATE sync_clock SET hlc = hlc WHERE id = 1 RETURNING hlc INTO clock;
  next := GREATEST(clock + 1, base);
  top := clock;
  FOR r IN SELECT seq, hlc FROM sync_outbox WHERE seq < 0 ORDER BY seq DESC LOOP
    IF r.hlc = '' THEN
      UPDATE sync_outbox SET seq = nextval('sync_outbox_seq'), hlc = waymark_hlc_text(next) WHERE seq = r.seq
        RETURNING op, entity, entity_id, fields, hlc, writer INTO o;
      PERFORM waymark_sync_record(o.op, o.entity, o.entity_id, o.fields, o.hlc, o.writer);
      top := GREATEST(top, next);
      next := next + 1;
    ELSE
      UPDATE sync_outbox SET seq = nextval('sync_outbox_seq') WHERE seq = r.seq;
      -- A received HLC moves the clock past it (as Hlc.receive does in the process).
      top := GREATEST(top, waymark_hlc_int(r.hlc));
      next := GREATEST(next, top + 1);
    END IF;
  END LOOP;
  UPDATE sync_clock SET hlc = top WHERE id = 1;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER sync_outbox_seal AFTER INSERT ON sync_outbox DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW WHEN (NEW.seq < 0) EXECUTE FUNCTION waymark_sync_outbox_seal();

-- The capture triggers: one function for every synced table (TG_ARGV[0] the entity, TG_ARGV[1..]
-- the synced columns, the same lists as the SQLite triggers and ENTITY_TABLES in sync/apply.ts).
CREATE FUNCTION waymark_sync_capture() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE TRIGGER sync_nodes AFTER INSERT OR DELETE OR UPDATE OF slug, label, function_type, payload_json, status, hardware_id, template_id, batch_id, serial, serial_number, created_at, updated_at ON nodes
  FOR EACH ROW EXECUTE FUNCTION waymark_sync_capture('node', 'slug', 'label', 'function_type', 'payload_json', 'status', 'hardware_id', 'template_id', 'batch_id', 'serial', 'serial_number', 'created_at', 'updated_at');
CREATE TRIGGER sync_rules AFTER INSERT OR DELETE OR UPDATE OF node_id, rule_type, conditions_json, function_type, payload_json, priority, enabled, created_at, updated_at ON rules
  FOR EACH ROW EXECUTE FUNCTION waymark_sync_capture('rule', 'node_id', 'rule_type', 'conditions_json', 'function_type', 'payload_json', 'priority', 'enabled', 'created_at', 'updated_at');
CREATE TRIGGER sync_templates AFTER INSERT OR DELETE OR UPDATE OF name, function_type, payload_json, locked_fields_json, created_at, updated_at ON templates
  FOR EACH ROW EXECUTE FUNCTION waymark_sync_capture('template', 'name', 'function_type', 'payload_json', 'locked_fields_json', 'created_at', 'updated_at');
CREATE TRIGGER sync_webhooks AFTER INSERT OR DELETE OR UPDATE OF url, events_json, description, active, secret, previous_secret, previous_secret_expires_at, created_at, updated_at ON webhooks
  FOR EACH ROW EXECUTE FUNCTION waymark_sync_capture('webhook', 'url', 'events_json', 'description', 'active', 'secret', 'previous_secret', 'previous_secret_expires_at', 'created_at', 'updated_at');
CREATE TRIGGER sync_batches AFTER INSERT OR DELETE OR UPDATE OF label, prefix, quantity, serial_start, function_type, base_payload_json, template_id, created_at ON batches
  FOR EACH ROW EXECUTE FUNCTION waymark_sync_capture('batch', 'label', 'prefix', 'quantity', 'serial_start', 'function_type', 'base_payload_json', 'template_id', 'created_at');
CREATE TRIGGER sync_api_keys AFTER INSERT OR DELETE OR UPDATE OF name, prefix, key_hash, plan, limits_json, created_at, revoked_at ON api_keys
  FOR EACH ROW EXECUTE FUNCTION waymark_sync_capture('api_key', 'name', 'prefix', 'key_hash', 'plan', 'limits_json', 'created_at', 'revoked_at');

-- A node's rules are deleted just before the node, so each rule's delete finds its organization
-- (SQLite migration 061).
CREATE FUNCTION waymark_sync_delete_node_rules() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM rules WHERE node_id = OLD.id;
  RETURN OLD;
END $$;
CREATE TRIGGER sync_nodes_del_rules BEFORE DELETE ON nodes FOR EACH ROW EXECUTE FUNCTION waymark_sync_delete_node_rules();

-- After rows are copied in with triggers off (waymark migrate, server/db/copyToPostgres.ts): new
-- seqs continue after the copied ones and the clock after every copied HLC.
CREATE FUNCTION waymark_sync_resume() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM setval('sync_outbox_seq', GREATEST(COALESCE((SELECT MAX(seq) FROM sync_outbox), 0), 1), (SELECT COUNT(*) > 0 FROM sync_outbox));
  UPDATE sync_clock SET hlc = GREATEST(hlc,
    COALESCE((SELECT MAX(waymark_hlc_int(hlc)) FROM sync_outbox), 0),
    COALESCE((SELECT MAX(waymark_hlc_int(hlc)) FROM sync_versions), 0),
    COALESCE((SELECT MAX(waymark_hlc_int(hlc)) FROM sync_tombstones), 0)) WHERE id = 1;
END $$;
