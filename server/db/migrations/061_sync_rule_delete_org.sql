-- A node's rules are deleted just before the node, by this trigger, rather than by the rules'
-- ON DELETE CASCADE, which runs once the node row is gone: the capture trigger of a rule's delete
-- (sync_rules_del) takes the organization from the rule's node, found none, and wrote the delete
-- to sync_outbox with org_id NULL. A site never pushed those deletes and the remote never fed them
-- on, so every other instance tombstoned the rules at the node's delete instead of their own (a
-- later HLC), and the edits of a rule between the two were judged differently.
CREATE TRIGGER sync_nodes_del_rules BEFORE DELETE ON nodes BEGIN
  DELETE FROM rules WHERE node_id = OLD.id;
END;

-- Deletes captured so far: their organization is their node's slug's (the slug row outlives the node).
UPDATE sync_outbox
   SET org_id = (SELECT org_id FROM slugs WHERE slugs.node_id = json_extract(sync_outbox.fields, '$.node_id'))
 WHERE entity = 'rule' AND op = 'delete' AND org_id IS NULL;
