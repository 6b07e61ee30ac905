import { randomUUID } from 'node:crypto';
import type { Database } from 'better-sqlite3';

/**
 * Subscribes an organization to `node.scanned` with an inactive endpoint, so the scan writer
 * records the outbox events (it writes them only while some endpoint subscribes) and the fan-out
 * queues deliveries, but nothing is ever sent. Written straight to the table: the tests and
 * benchmarks using it seed their databases that way.
 */
export function subscribeToScans(db: Database, orgId: string): string {
  const id = randomUUID();
  const now = new Date().toISOString();
  db.prepare(
    `INSERT INTO webhooks (id, org_id, url, events_json, description, active, secret, start_seq, created_at, updated_at)
     VALUES (?, ?, 'https://hooks.example.com/scans', '["node.scanned"]', 'scan events (test)', 0, ?, (SELECT COALESCE(MAX(seq), 0) FROM outbox_events), ?, ?)`,
  ).run(id, orgId, `whsec_${randomUUID().replaceAll('-', '')}`, now, now);
  return id;
}
