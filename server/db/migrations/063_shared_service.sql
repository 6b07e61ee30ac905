-- Many processes on one database are one service (issue 19). Unused by a single process on
-- SQLite, which keeps its sender loops and rate-limit windows in memory; the same schema on both
-- backends all the same (server/db/schema.ts).

-- One sender per webhook endpoint at a time across processes: the process holding an unexpired
-- claim sends the endpoint's queue head (per-endpoint order) and releases it with the outcome. A
-- process that dies mid-attempt leaves its claim to expire; another then retries the same
-- delivery (same webhook-id). Not synced, not part of the endpoint.
CREATE TABLE webhook_claims (
  webhook_id    TEXT PRIMARY KEY REFERENCES webhooks(id) ON DELETE CASCADE,
  owner         TEXT NOT NULL,            -- the claiming process's dispatcher
  claimed_until TEXT NOT NULL             -- ISO 8601; the claim is free from then on
);

-- Rate-limit windows per API key (http/rateLimit.ts), charged by one conditional upsert per
-- request: the standard and batch counts of the minute, and the burst count of its latest second.
CREATE TABLE rate_limit_windows (
  key_id   TEXT NOT NULL,
  minute   INTEGER NOT NULL,              -- Unix minute
  standard INTEGER NOT NULL,
  batch    INTEGER NOT NULL,
  second   INTEGER NOT NULL,              -- Unix second of `burst`
  burst    INTEGER NOT NULL,
  PRIMARY KEY (key_id, minute)
);
