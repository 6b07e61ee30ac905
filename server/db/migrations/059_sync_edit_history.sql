-- The conflict log names every edit a delete discards (docs/sync.md, "Conflicts"), whatever order
-- the edits and the deletes arrive in. sync_versions only keeps each field's latest version and is
-- dropped with the row, so the apply path reads an entity's edit history instead:
--   * the edits applied here: the entity's upserts in sync_outbox (indexed below);
--   * the edits received but not applied (lost to a newer version of every field they touched, or
--     older than the delete they arrived after): sync_unapplied.
-- When a delete arrives for an entity already deleted by a later delete (two sites deleting it
-- offline), the earlier one wins: the tombstone moves back, the edits between are logged, and so
-- are those of the node's rules, which a tombstone's parent_id finds once their rows are gone.
CREATE INDEX sync_outbox_entity ON sync_outbox(entity, entity_id, hlc);

CREATE TABLE sync_unapplied (
  entity    TEXT NOT NULL,
  entity_id TEXT NOT NULL,
  hlc       TEXT NOT NULL,
  writer    TEXT NOT NULL,
  fields    TEXT NOT NULL,
  PRIMARY KEY (entity, entity_id, hlc, writer)
) WITHOUT ROWID;

ALTER TABLE sync_tombstones ADD COLUMN parent_id TEXT;
UPDATE sync_tombstones SET parent_id = (
  SELECT json_extract(o.fields, '$.node_id') FROM sync_outbox o
   WHERE o.entity = 'rule' AND o.entity_id = sync_tombstones.entity_id AND json_extract(o.fields, '$.node_id') IS NOT NULL LIMIT 1
) WHERE entity = 'rule';
CREATE INDEX sync_tombstones_parent ON sync_tombstones(parent_id) WHERE parent_id IS NOT NULL;

DROP TRIGGER sync_outbox_tombstones;
CREATE TRIGGER sync_outbox_tombstones AFTER INSERT ON sync_outbox WHEN NEW.op = 'delete' BEGIN
  INSERT OR IGNORE INTO sync_tombstones (entity, entity_id, hlc, writer, parent_id)
  VALUES (NEW.entity, NEW.entity_id, NEW.hlc, NEW.writer, CASE WHEN NEW.entity = 'rule' THEN json_extract(NEW.fields, '$.node_id') END);
  DELETE FROM sync_versions WHERE entity = NEW.entity AND entity_id = NEW.entity_id;
END;
