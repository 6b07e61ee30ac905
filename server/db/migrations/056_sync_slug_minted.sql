-- A node's creation also carries when its slug was minted (slugs.minted_at, written just before
-- the node in the same transaction), so the slug row is the same on every instance.
DROP TRIGGER sync_nodes_ins;
CREATE TRIGGER sync_nodes_ins AFTER INSERT ON nodes BEGIN
  INSERT INTO sync_outbox (org_id, entity, entity_id, op, fields, hlc, writer, group_id, hold, pushed, pulled)
  VALUES (NEW.org_id, 'node', NEW.id, 'upsert', json_object('slug', NEW.slug, 'label', NEW.label, 'function_type', NEW.function_type, 'payload_json', NEW.payload_json, 'status', NEW.status, 'hardware_id', NEW.hardware_id, 'template_id', NEW.template_id, 'batch_id', NEW.batch_id, 'serial', NEW.serial, 'serial_number', NEW.serial_number, 'created_at', NEW.created_at, 'updated_at', NEW.updated_at,
                                                           'minted_at', (SELECT minted_at FROM slugs WHERE slug = NEW.slug)),
          waymark_hlc(), waymark_writer(), waymark_group(), NEW.batch_id, waymark_sync_applying(), waymark_sync_applying());
END;
