-- Instance-admin keys may act on the whole instance, beyond their organization: pair it with a
-- remote, see its data directory (docs/api.md, "Instance-admin keys"). The key created with the
-- first organization is one, and so is a key made with `waymark keys create --admin`. On an
-- existing instance the oldest active key of the first organization becomes the admin key.
-- Not replicated: a key pulled from a remote is never an admin key here.
ALTER TABLE api_keys ADD COLUMN admin INTEGER NOT NULL DEFAULT 0 CHECK (admin IN (0, 1));

UPDATE api_keys SET admin = 1
 WHERE id = (SELECT k.id FROM api_keys k
              WHERE k.revoked_at IS NULL
                AND k.org_id = (SELECT id FROM organizations ORDER BY created_at, rowid LIMIT 1)
              ORDER BY k.created_at, k.rowid LIMIT 1);
