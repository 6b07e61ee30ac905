-- Batch generation on many processes (issue 19): the process generating a batch holds a lease
-- (owner, expiry), renewed with each chunk in the chunk's transaction; another process takes
-- over a batch whose lease ran out (its generator died), claiming it with FOR UPDATE SKIP LOCKED.
ALTER TABLE batches ADD COLUMN lease_owner TEXT;
ALTER TABLE batches ADD COLUMN lease_until TEXT;

-- A serial number exists once per batch, whoever generates it: a takeover can never repeat one.
DROP INDEX IF EXISTS nodes_batch;
CREATE UNIQUE INDEX nodes_batch ON nodes(batch_id, serial_number) WHERE batch_id IS NOT NULL;
