-- Instance-admin keys (as server/db/migrations/002_api_key_admin.sql): the key created with the
-- first organization, or one made with `waymark keys create --admin`. Not captured for sync.
ALTER TABLE api_keys ADD COLUMN admin INTEGER NOT NULL DEFAULT 0 CHECK (admin IN (0, 1));

UPDATE api_keys SET admin = 1
 WHERE id = (SELECT k.id FROM api_keys k
              WHERE k.revoked_at IS NULL
                AND k.org_id = (SELECT id FROM organizations ORDER BY created_at, rowid LIMIT 1)
              ORDER BY k.created_at, k.rowid LIMIT 1);
