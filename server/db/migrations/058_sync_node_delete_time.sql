-- A node's delete change carries its slug's deleted_at (the nodes repo tombstones the slug before
-- deleting the row), so every instance records the origin's deletion time, not its own.
DROP TRIGGER sync_nodes_del;
CREATE TRIGGER sync_nodes_del AFTER DELETE ON nodes BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  VALUES (OLD.org_id, 'node', OLD.id, 'delete', json_object('slug', OLD.slug, 'deleted_at', (SELECT deleted_at FROM slugs WHERE slug = OLD.slug)), waymark_hlc(), waymark_writer(), waymark_group(), OLD.batch_id, waymark_sync_applying(), waymark_sync_applying());
END;
