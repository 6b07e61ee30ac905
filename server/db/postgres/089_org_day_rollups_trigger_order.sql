-- A node's delete takes the organization's hourly sums, then its daily ones: the fold's order.
-- PostgreSQL fires a table's BEFORE DELETE triggers in the order of their names, so 087's
-- scan_org_day_rollups_node_deleted ran before 071's scan_org_rollups_node_deleted: a delete
-- (a sync push applying one, say) locked daily rows and waited for hourly ones while a fold
-- chunk held hourly rows and waited for the daily ones, and PostgreSQL ended one of them as a
-- deadlock (a sync push answered 500 once in CI). The new name sorts after the hourly trigger's.
ALTER TRIGGER scan_org_day_rollups_node_deleted ON nodes RENAME TO scan_org_rollups_node_deleted_then_days;
