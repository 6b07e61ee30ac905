-- Password attempts counted in the database, shared by every process (see the SQLite migration
-- of the same name). Unlogged, as rate_limit_windows: fifteen-minute counters are not worth a
-- WAL write per attempt, and a crash of the database server only resets the windows.
CREATE UNLOGGED TABLE password_attempts (
  key         TEXT PRIMARY KEY,
  window_from BIGINT NOT NULL,
  attempts    BIGINT NOT NULL
);
CREATE INDEX password_attempts_window ON password_attempts(window_from);
