import type { Database } from 'better-sqlite3';
import { deferredFlush, type DeferFlush } from '../../db/deferredFlush.ts';

export interface WebhookRow {
  id: string;
  org_id: string;
  url: string;
  events: string[];
  description: string | null;
  active: boolean;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  start_seq: number;
  failing_since: string | null;
  disabled_at: string | null;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

type StoredWebhook = Omit<WebhookRow, 'events' | 'active'> & { events_json: string; active: number };

const WEBHOOK_COLUMNS =
  'id, org_id, url, events_json, description, active, secret, previous_secret, previous_secret_expires_at, start_seq, failing_since, disabled_at, disabled_reason, created_at, updated_at';

function webhookFromStored(row: StoredWebhook): WebhookRow {
  const { events_json, active, ...rest } = row;
  return { ...rest, events: JSON.parse(events_json) as string[], active: active === 1 };
}

function webhookToStored(row: WebhookRow): StoredWebhook {
  const { events, active, ...rest } = row;
  return { ...rest, events_json: JSON.stringify(events), active: active ? 1 : 0 };
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface DeliveryRow {
  seq: number;
  id: string;
  webhook_id: string;
  event_seq: number;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  round_attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  completed_at: string | null;
  created_at: string;
}

const DELIVERY_COLUMNS =
  'seq, id, webhook_id, event_seq, event_id, event_type, status, attempts, round_attempts, next_attempt_at, last_attempt_at, last_status_code, last_error, completed_at, created_at';

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  started_at: string;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  succeeded: boolean;
}

/** An outbox event as the deliverer needs it. */
export interface EventRow {
  seq: number;
  id: string;
  org_id: string;
  type: string;
  data_json: string;
  created_at: string;
}

/** The head (oldest pending delivery) of one endpoint's queue. */
export interface QueueHead {
  webhook_id: string;
  seq: number;
  next_attempt_at: string;
}

export class WebhooksRepo {
  private readonly db: Database;
  private readonly deferFlush: DeferFlush;
  private readonly stmts;

  constructor(db: Database) {
    this.db = db;
    this.deferFlush = deferredFlush(db);
    this.stmts = {
      get: db.prepare(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE id = ?`),
      insert: db.prepare(
        `INSERT INTO webhooks (${WEBHOOK_COLUMNS}) VALUES (@id, @org_id, @url, @events_json, @description, @active, @secret, @previous_secret, @previous_secret_expires_at, @start_seq, @failing_since, @disabled_at, @disabled_reason, @created_at, @updated_at)`,
      ),
      update: db.prepare(
        `UPDATE webhooks SET url = @url, events_json = @events_json, description = @description, active = @active, secret = @secret,
           previous_secret = @previous_secret, previous_secret_expires_at = @previous_secret_expires_at, failing_since = @failing_since,
           disabled_at = @disabled_at, disabled_reason = @disabled_reason, updated_at = @updated_at WHERE id = @id`,
      ),
      setFailingSince: db.prepare('UPDATE webhooks SET failing_since = ? WHERE id = ?'),
      remove: db.prepare('DELETE FROM webhooks WHERE id = ?'),
      listOrg: db.prepare(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE org_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`),
      countOrg: db.prepare('SELECT COUNT(*) FROM webhooks WHERE org_id = ?').pluck(),
      allForOrg: db.prepare(`SELECT ${WEBHOOK_COLUMNS} FROM webhooks WHERE org_id = ?`),
      maxOutboxSeq: db.prepare('SELECT COALESCE(MAX(seq), 0) FROM outbox_events').pluck(),
      cursor: db.prepare('SELECT last_seq FROM webhook_fanout_cursor WHERE id = 1').pluck(),
      setCursor: db.prepare('UPDATE webhook_fanout_cursor SET last_seq = ? WHERE id = 1'),
      eventsAfter: db.prepare('SELECT seq, id, org_id, type, data_json, created_at FROM outbox_events WHERE seq > ? ORDER BY seq LIMIT ?'),
      eventBySeq: db.prepare('SELECT seq, id, org_id, type, data_json, created_at FROM outbox_events WHERE seq = ?'),
      insertDelivery: db.prepare(
        `INSERT OR IGNORE INTO webhook_deliveries (id, webhook_id, event_seq, event_id, event_type, status, next_attempt_at, created_at)
         VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)`,
      ),
      delivery: db.prepare(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = ?`),
      deliveryByEvent: db.prepare(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = ? AND event_id = ?`),
      head: db.prepare(
        // INDEXED BY: without statistics the planner picks the list index and walks every delivery.
        `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries INDEXED BY webhook_deliveries_pending
          WHERE webhook_id = ? AND status = 'pending' ORDER BY seq LIMIT 1`,
      ),
      activeIds: db.prepare('SELECT id FROM webhooks WHERE active = 1').pluck(),
      headOf: db.prepare(
        `SELECT webhook_id, seq, next_attempt_at FROM webhook_deliveries INDEXED BY webhook_deliveries_pending
          WHERE webhook_id = ? AND status = 'pending' ORDER BY seq LIMIT 1`,
      ),
      finishAttempt: db.prepare(
        `UPDATE webhook_deliveries SET status = @status, attempts = attempts + 1, round_attempts = round_attempts + 1,
           next_attempt_at = @next_attempt_at, last_attempt_at = @last_attempt_at, last_status_code = @last_status_code,
           last_error = @last_error, completed_at = @completed_at WHERE id = @id`,
      ),
      insertAttempt: db.prepare(
        `INSERT INTO webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error, succeeded)
         VALUES (@delivery_id, @attempt, @started_at, @duration_ms, @status_code, @error, @succeeded)`,
      ),
      expedite: db.prepare(`UPDATE webhook_deliveries SET next_attempt_at = ? WHERE id = ? AND status = 'pending'`),
      requeue: db.prepare(
        `UPDATE webhook_deliveries SET status = 'pending', round_attempts = 0, next_attempt_at = ?, completed_at = NULL WHERE id = ?`,
      ),
      prune: db.prepare(
        `DELETE FROM webhook_deliveries WHERE seq IN (
           SELECT seq FROM webhook_deliveries INDEXED BY webhook_deliveries_done
            WHERE status <> 'pending' AND completed_at < ? LIMIT ?)`,
      ),
      deliveryCounts: db.prepare('SELECT status, COUNT(*) AS n FROM webhook_deliveries GROUP BY status'),
      endpointCounts: db.prepare('SELECT active, COUNT(*) AS n FROM webhooks GROUP BY active'),
      attemptsFor: db.prepare(
        'SELECT delivery_id, attempt, started_at, duration_ms, status_code, error, succeeded FROM webhook_attempts WHERE delivery_id = ? ORDER BY attempt',
      ),
    };
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  /**
   * A transaction committed without waiting for fsync (synchronous=NORMAL for this commit only,
   * restored after). In WAL mode it survives a process crash; a power cut may lose it, which for
   * delivery bookkeeping means at worst an event is fanned out again from the outbox or sent
   * again under the same webhook-id: at-least-once still holds. The next FULL commit (any API
   * write) syncs it. Inside another transaction it is just part of that one (db/deferredFlush.ts).
   */
  relaxedTransaction<T>(fn: () => T): T {
    return this.deferFlush(() => this.db.transaction(fn)());
  }

  // ---- endpoints ----

  get(id: string): WebhookRow | undefined {
    const row = this.stmts.get.get(id) as StoredWebhook | undefined;
    return row && webhookFromStored(row);
  }

  getForOrg(orgId: string, id: string): WebhookRow | undefined {
    const row = this.get(id);
    return row && row.org_id === orgId ? row : undefined;
  }

  insert(row: WebhookRow): void {
    this.stmts.insert.run(webhookToStored(row));
  }

  update(row: WebhookRow): void {
    this.stmts.update.run(webhookToStored(row));
  }

  setFailingSince(id: string, at: string | null): void {
    this.stmts.setFailingSince.run(at, id);
  }

  remove(id: string): void {
    this.stmts.remove.run(id);
  }

  list(orgId: string, limit: number, offset: number): { rows: WebhookRow[]; total: number } {
    const rows = (this.stmts.listOrg.all(orgId, limit, offset) as StoredWebhook[]).map(webhookFromStored);
    return { rows, total: this.stmts.countOrg.get(orgId) as number };
  }

  /** Every endpoint of an organization, active or not (inactive ones still queue). */
  allForOrg(orgId: string): WebhookRow[] {
    return (this.stmts.allForOrg.all(orgId) as StoredWebhook[]).map(webhookFromStored);
  }

  maxOutboxSeq(): number {
    return this.stmts.maxOutboxSeq.get() as number;
  }

  // ---- fan-out ----

  fanoutCursor(): number {
    return this.stmts.cursor.get() as number;
  }

  setFanoutCursor(seq: number): void {
    this.stmts.setCursor.run(seq);
  }

  eventsAfter(seq: number, limit: number): EventRow[] {
    return this.stmts.eventsAfter.all(seq, limit) as EventRow[];
  }

  event(seq: number): EventRow | undefined {
    return this.stmts.eventBySeq.get(seq) as EventRow | undefined;
  }

  insertDelivery(d: Pick<DeliveryRow, 'id' | 'webhook_id' | 'event_seq' | 'event_id' | 'event_type' | 'next_attempt_at' | 'created_at'>): void {
    this.stmts.insertDelivery.run(d.id, d.webhook_id, d.event_seq, d.event_id, d.event_type, d.next_attempt_at, d.created_at);
  }

  // ---- deliveries ----

  delivery(id: string): DeliveryRow | undefined {
    return this.stmts.delivery.get(id) as DeliveryRow | undefined;
  }

  deliveryByEvent(webhookId: string, eventId: string): DeliveryRow | undefined {
    return this.stmts.deliveryByEvent.get(webhookId, eventId) as DeliveryRow | undefined;
  }

  /** The oldest pending delivery of an endpoint: strictly the next one to send. */
  head(webhookId: string): DeliveryRow | undefined {
    return this.stmts.head.get(webhookId) as DeliveryRow | undefined;
  }

  /** The queue head of every active endpoint that has pending deliveries. */
  heads(): QueueHead[] {
    // One index seek per active endpoint (a scan of all pending rows would grow with a backlog).
    const heads: QueueHead[] = [];
    for (const id of this.stmts.activeIds.all() as string[]) {
      const head = this.stmts.headOf.get(id) as QueueHead | undefined;
      if (head) heads.push(head);
    }
    return heads;
  }

  recordAttempt(
    attempt: AttemptRow,
    outcome: Pick<DeliveryRow, 'id' | 'status' | 'next_attempt_at' | 'last_attempt_at' | 'last_status_code' | 'last_error' | 'completed_at'>,
  ): void {
    this.stmts.insertAttempt.run({ ...attempt, succeeded: attempt.succeeded ? 1 : 0 });
    this.stmts.finishAttempt.run(outcome);
  }

  /** Moves a pending delivery's next attempt to `at`, keeping its place in the retry schedule. */
  expedite(id: string, at: string): void {
    this.stmts.expedite.run(at, id);
  }

  requeue(id: string, at: string): void {
    this.stmts.requeue.run(at, id);
  }

  attempts(deliveryId: string): AttemptRow[] {
    return (this.stmts.attemptsFor.all(deliveryId) as Array<Omit<AttemptRow, 'succeeded'> & { succeeded: number }>).map((a) => ({
      ...a,
      succeeded: a.succeeded === 1,
    }));
  }

  /** Deletes up to `limit` finished deliveries (their attempts cascade) completed before `before`. */
  pruneFinished(before: string, limit: number): number {
    return this.stmts.prune.run(before, limit).changes;
  }

  /** Deliveries by status and endpoints by state, for /metrics. */
  stats(): { deliveries: Record<string, number>; endpoints: { active: number; inactive: number } } {
    const deliveries: Record<string, number> = { pending: 0, succeeded: 0, failed: 0 };
    for (const row of this.stmts.deliveryCounts.all() as Array<{ status: string; n: number }>) deliveries[row.status] = row.n;
    const endpoints = { active: 0, inactive: 0 };
    for (const row of this.stmts.endpointCounts.all() as Array<{ active: number; n: number }>) endpoints[row.active ? 'active' : 'inactive'] = row.n;
    return { deliveries, endpoints };
  }

  listDeliveries(webhookId: string, filter: { status?: DeliveryStatus | undefined; limit: number; offset: number }): { rows: DeliveryRow[]; total: number } {
    const where = filter.status ? 'webhook_id = @webhook_id AND status = @status' : 'webhook_id = @webhook_id';
    const params = { webhook_id: webhookId, status: filter.status, limit: filter.limit, offset: filter.offset };
    const rows = this.db
      .prepare(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE ${where} ORDER BY seq DESC LIMIT @limit OFFSET @offset`)
      .all(filter.status ? params : { webhook_id: webhookId, limit: filter.limit, offset: filter.offset }) as DeliveryRow[];
    const total = this.db
      .prepare(`SELECT COUNT(*) FROM webhook_deliveries WHERE ${where}`)
      .pluck()
      .get(filter.status ? { webhook_id: webhookId, status: filter.status } : { webhook_id: webhookId }) as number;
    return { rows, total };
  }
}
