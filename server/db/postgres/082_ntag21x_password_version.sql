-- NTAG21x password master key versions (issue 16): the write log records which version of the
-- organization's NTAG21x master key a protected tag's password was derived from, so that a
-- rewrite after a rotation authenticates with that version and moves the tag to the current one.
-- NULL: not protected, or protected before versions existed (version 1, the key of that time).
ALTER TABLE nfc_writes ADD COLUMN password_version BIGINT;
