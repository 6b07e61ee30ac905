-- NTAG213/215/216 tap evidence and protection (issue 16 item 3): a session may mirror the UID and
-- NFC counter into each tag's URL and protect each tag with its per-tag password; the write log
-- says which tags got what (a rewrite reads such a tag's configuration first).
ALTER TABLE nfc_sessions ADD COLUMN mirror_tags INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nfc_sessions ADD COLUMN protect_tags INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nfc_writes ADD COLUMN mirror INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nfc_writes ADD COLUMN protected INTEGER NOT NULL DEFAULT 0;
CREATE INDEX nfc_writes_uid ON nfc_writes(org_id, uid, seq);

