/**
 * BRIDGE until the webhooks feature is on the store (issue 19): its service still writes in
 * synchronous transactions on the SQLite connection, so it records its events (webhook.test,
 * webhook.disabled) through this synchronous twin of Outbox.record. Same table, same ids; the
 * listeners are the real outbox's. Delete with the last synchronous caller.
 */
import type { Database } from 'better-sqlite3';
import type { Clock } from './clock.ts';
import { newId } from './ids.ts';

export class LegacyOutbox {
  private readonly insert;
  private readonly clock: Clock;
  private readonly notify: () => void;

  constructor(db: Database, clock: Clock, notify: () => void = () => {}) {
    this.clock = clock;
    this.notify = notify;
    this.insert = db.prepare('INSERT INTO outbox_events (id, org_id, type, data_json, created_at) VALUES (?, ?, ?, ?, ?)');
  }

  record(orgId: string, type: string, data: unknown): string {
    const id = `evt_${newId().replaceAll('-', '')}`;
    this.insert.run(id, orgId, type, JSON.stringify(data), new Date(this.clock.now()).toISOString());
    // After the caller's synchronous transaction ends.
    queueMicrotask(this.notify);
    return id;
  }
}
