-- Pruning the event outbox (platform/outboxPruner.ts): an event still referred to by a webhook
-- delivery (pending, or finished and kept for its log) stays; this index answers "which of these
-- events does a delivery refer to" without reading every delivery.
CREATE INDEX webhook_deliveries_event ON webhook_deliveries(event_seq);
