-- Webhooks: endpoints, per-endpoint deliveries fanned out from outbox_events, and attempts.
-- Timestamps are ISO 8601 UTC strings (lexicographic order = time order).

CREATE TABLE webhooks (
  id              TEXT PRIMARY KEY,
  org_id          TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  url             TEXT NOT NULL,
  events_json     TEXT NOT NULL,            -- subscribed event types
  description     TEXT,
  active          INTEGER NOT NULL DEFAULT 1,
  secret          TEXT NOT NULL,            -- whsec_… (needed in clear to sign)
  previous_secret TEXT,                     -- after a rotation: still signs until previous_secret_expires_at
  previous_secret_expires_at TEXT,
  start_seq       INTEGER NOT NULL,         -- outbox seq at creation: only later events are delivered
  failing_since   TEXT,                     -- first failed attempt of the current failing streak
  disabled_at     TEXT,                     -- set when disabled automatically (failing for too long)
  disabled_reason TEXT,
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL
);
CREATE INDEX webhooks_org ON webhooks(org_id, created_at);

-- One row per (endpoint, event). seq gives the per-endpoint delivery order (= outbox order).
CREATE TABLE webhook_deliveries (
  seq             INTEGER PRIMARY KEY AUTOINCREMENT,
  id              TEXT NOT NULL UNIQUE,
  webhook_id      TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  event_seq       INTEGER NOT NULL,         -- outbox_events.seq
  event_id        TEXT NOT NULL,            -- outbox_events.id = webhook-id on every attempt
  event_type      TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0,
  round_attempts  INTEGER NOT NULL DEFAULT 0, -- attempts since creation or the last redelivery
  next_attempt_at TEXT,                     -- when pending
  last_attempt_at TEXT,
  last_status_code INTEGER,
  last_error      TEXT,
  completed_at    TEXT,
  created_at      TEXT NOT NULL,
  UNIQUE (webhook_id, event_id)
);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries(webhook_id, seq) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_list ON webhook_deliveries(webhook_id, seq DESC);
CREATE INDEX webhook_deliveries_done ON webhook_deliveries(completed_at) WHERE status <> 'pending';

CREATE TABLE webhook_attempts (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  delivery_id TEXT NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  attempt     INTEGER NOT NULL,
  started_at  TEXT NOT NULL,
  duration_ms INTEGER NOT NULL,
  status_code INTEGER,
  error       TEXT,
  succeeded   INTEGER NOT NULL
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id, attempt);

-- Fan-out cursor: the last outbox seq turned into deliveries (advanced in the same transaction
-- as the inserts, so fan-out is exactly-once across crashes).
CREATE TABLE webhook_fanout_cursor (
  id       INTEGER PRIMARY KEY CHECK (id = 1),
  last_seq INTEGER NOT NULL
);
INSERT INTO webhook_fanout_cursor (id, last_seq) VALUES (1, COALESCE((SELECT MAX(seq) FROM outbox_events), 0));
