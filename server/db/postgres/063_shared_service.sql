-- Many processes on one database are one service (issue 19); see the SQLite migration of the
-- same name for the columns.

CREATE TABLE webhook_claims (
  webhook_id    TEXT PRIMARY KEY REFERENCES webhooks(id) ON DELETE CASCADE,
  owner         TEXT NOT NULL,
  claimed_until TEXT NOT NULL
);

-- Unlogged: counters of the current minute are not worth a WAL write per request, and losing
-- them in a crash of the database server (or on failover to a replica) only resets the windows.
CREATE UNLOGGED TABLE rate_limit_windows (
  key_id   TEXT NOT NULL,
  minute   BIGINT NOT NULL,
  standard BIGINT NOT NULL,
  batch    BIGINT NOT NULL,
  second   BIGINT NOT NULL,
  burst    BIGINT NOT NULL,
  PRIMARY KEY (key_id, minute)
);
