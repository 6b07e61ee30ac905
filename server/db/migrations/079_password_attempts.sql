-- Password attempts on a gated node (docs/scans.md "Node limits"), counted in the database so
-- that every process of an instance shares one count: five tries per node and client address in
-- fifteen minutes whichever process answers. `key` is a hash of the node and the address (no
-- address is stored); `window_from` is when the window opened (clock ms). Rows of windows that
-- are over are deleted now and then by the process that counts.
CREATE TABLE password_attempts (
  key         TEXT PRIMARY KEY,
  window_from INTEGER NOT NULL,
  attempts    INTEGER NOT NULL
);
CREATE INDEX password_attempts_window ON password_attempts(window_from);
