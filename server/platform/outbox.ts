import type { Database } from 'better-sqlite3';
import type { Clock } from './clock.ts';
import { newId } from './ids.ts';

export interface OutboxEvent {
  seq: number;
  id: string;
  org_id: string;
  type: string;
  data: unknown;
  created_at: string;
}

/**
 * Whether some endpoint of the organization, active or not, subscribes to `type`. Events that
 * no endpoint subscribes to could never be delivered (an endpoint receives only events recorded
 * after its creation), so high-volume writers (`node.scanned`) skip them (docs/decisions.md).
 */
export function subscriptionCheck(db: Database): (orgId: string, type: string) => boolean {
  const exists = db
    .prepare('SELECT EXISTS (SELECT 1 FROM webhooks w, json_each(w.events_json) e WHERE w.org_id = ? AND e.value = ?)')
    .pluck();
  return (orgId, type) => exists.get(orgId, type) === 1;
}

/**
 * Appends an event to the durable outbox. Call it inside the transaction that makes the change,
 * so the event exists if and only if the change committed. The id is the webhook-id.
 */
export class Outbox {
  private readonly insert;
  private readonly listeners = new Set<() => void>();
  /** See subscriptionCheck. */
  readonly subscribed: (orgId: string, type: string) => boolean;

  private readonly db: Database;
  private readonly clock: Clock;

  constructor(db: Database, clock: Clock) {
    this.db = db;
    this.clock = clock;
    this.insert = db.prepare(
      'INSERT INTO outbox_events (id, org_id, type, data_json, created_at) VALUES (?, ?, ?, ?, ?)',
    );
    this.subscribed = subscriptionCheck(db);
  }

  record(orgId: string, type: string, data: unknown): string {
    const id = `evt_${newId().replaceAll('-', '')}`;
    this.insert.run(id, orgId, type, JSON.stringify(data), new Date(this.clock.now()).toISOString());
    // Listeners (e.g. the webhook dispatcher) are told after the current transaction ends.
    if (this.listeners.size > 0) queueMicrotask(() => this.listeners.forEach((l) => l()));
    return id;
  }

  /**
   * Tells the listeners that events were written to outbox_events without record(): the scan
   * writer inserts `node.scanned` rows itself (time-ordered ids, batched).
   */
  notifyRecorded(): void {
    if (this.listeners.size > 0) queueMicrotask(() => this.listeners.forEach((l) => l()));
  }

  /** Called (asynchronously) whenever an event was recorded: wake-up for delivery workers. */
  onRecorded(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Events after `afterSeq`, oldest first. */
  readAfter(afterSeq: number, limit = 500): OutboxEvent[] {
    const rows = this.db
      .prepare('SELECT seq, id, org_id, type, data_json, created_at FROM outbox_events WHERE seq > ? ORDER BY seq LIMIT ?')
      .all(afterSeq, limit) as Array<Omit<OutboxEvent, 'data'> & { data_json: string }>;
    return rows.map(({ data_json, ...row }) => ({ ...row, data: JSON.parse(data_json) }));
  }
}
