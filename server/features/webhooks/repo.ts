import type { Database } from 'better-sqlite3';
import { sql } from 'kysely';
import type { Dialect, Executor } from '../../db/store.ts';
import { SecretCipher } from '../../platform/secretCipher.ts';

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

/** An endpoint without its signing secrets. */
export type WebhookEndpoint = Omit<WebhookRow, 'secret' | 'previous_secret'>;

type StoredWebhook = Omit<WebhookRow, 'events' | 'active'> & { events_json: string; active: number };

const WEBHOOK_COLUMNS = [
  'id',
  'org_id',
  'url',
  'events_json',
  'description',
  'active',
  'secret',
  'previous_secret',
  'previous_secret_expires_at',
  'start_seq',
  'failing_since',
  'disabled_at',
  'disabled_reason',
  'created_at',
  'updated_at',
] as const;

/** The signing secrets are sealed in the database (docs/decisions.md, "Webhook secrets at rest"): rows carry them in clear. */
function webhookFromStored(row: StoredWebhook, cipher: SecretCipher): WebhookRow {
  const { events_json, active, secret, previous_secret, ...rest } = row;
  return {
    ...rest,
    events: JSON.parse(events_json) as string[],
    active: active === 1,
    secret: cipher.open(secret, row.id),
    previous_secret: previous_secret === null ? null : cipher.open(previous_secret, row.id),
  };
}

function webhookToStored(row: WebhookRow, cipher: SecretCipher): StoredWebhook {
  const { events, active, secret, previous_secret, ...rest } = row;
  return {
    ...rest,
    events_json: JSON.stringify(events),
    active: active ? 1 : 0,
    secret: cipher.seal(secret, row.id),
    previous_secret: previous_secret === null ? null : cipher.seal(previous_secret, row.id),
  };
}

/** For repos that never read or write a secret (the outbox's subscription check). */
const NO_CIPHER = new SecretCipher(() => {
  throw new Error('this WebhooksRepo was made without the data key');
});

/** How many endpoints one transaction of the sealing step rewrites. */
const SEAL_BATCH = 100;

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

const DELIVERY_COLUMNS = [
  'seq',
  'id',
  'webhook_id',
  'event_seq',
  'event_id',
  'event_type',
  'status',
  'attempts',
  'round_attempts',
  'next_attempt_at',
  'last_attempt_at',
  'last_status_code',
  'last_error',
  'completed_at',
  'created_at',
] as const;

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  started_at: string;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
  succeeded: boolean;
}

/** An outbox event as the deliverer needs it (data_json as stored: the body is built from it byte for byte). */
export interface EventRow {
  seq: number;
  id: string;
  org_id: string;
  type: string;
  data_json: string;
  created_at: string;
}

const EVENT_COLUMNS = ['seq', 'id', 'org_id', 'type', 'data_json', 'created_at'] as const;

/** The head (oldest pending delivery) of one endpoint's queue, and who holds the endpoint's sender claim. */
export interface QueueHead {
  webhook_id: string;
  seq: number;
  next_attempt_at: string | null;
  /** Until when another process may be sending it (null: never claimed). */
  claimed_until: string | null;
  claimed_by: string | null;
}

/**
 * Literal 'pending' (not a bound parameter): SQLite uses the partial indexes on status only when
 * the query states the index's own condition.
 */
const PENDING = sql.lit('pending');

/**
 * Webhook endpoints, their delivery queues and attempts, the fan-out cursor, and the sender
 * claims that make processes sharing a PostgreSQL database one service (webhook_claims).
 */
export class WebhooksRepo {
  readonly dialect: Dialect;
  private readonly cipher: SecretCipher;

  constructor(dialect: Dialect, cipher: SecretCipher = NO_CIPHER) {
    this.dialect = dialect;
    this.cipher = cipher;
  }

  // ---- endpoints ----

  async get(db: Executor, id: string): Promise<WebhookRow | undefined> {
    const row = await db.selectFrom('webhooks').select(WEBHOOK_COLUMNS).where('id', '=', id).executeTakeFirst();
    return row && webhookFromStored(row, this.cipher);
  }

  async getForOrg(db: Executor, orgId: string, id: string): Promise<WebhookRow | undefined> {
    const row = await this.get(db, id);
    return row && row.org_id === orgId ? row : undefined;
  }

  async insert(db: Executor, row: WebhookRow): Promise<void> {
    await db.insertInto('webhooks').values(webhookToStored(row, this.cipher)).execute();
  }

  async update(db: Executor, row: WebhookRow): Promise<void> {
    const { id, org_id: _org, start_seq: _start, created_at: _created, ...fields } = webhookToStored(row, this.cipher);
    // An unchanged secret keeps its sealed value: sealing again (a new nonce) would look like a
    // change of the column to sync's capture triggers.
    const stored = await db.selectFrom('webhooks').select(['secret', 'previous_secret']).where('id', '=', id).executeTakeFirst();
    if (stored && this.cipher.open(stored.secret, id) === row.secret) fields.secret = stored.secret;
    if (stored && (stored.previous_secret === null ? null : this.cipher.open(stored.previous_secret, id)) === row.previous_secret) {
      fields.previous_secret = stored.previous_secret;
    }
    await db.updateTable('webhooks').set(fields).where('id', '=', id).execute();
  }

  /**
   * Seals up to SEAL_BATCH endpoints whose secrets are still in clear (written before sealing
   * existed, migration 084): returns how many it sealed. Each row is rewritten only if it still
   * holds the clear value read, so a process racing another (or a rotation) loses nothing.
   */
  async sealClearSecrets(db: Executor): Promise<number> {
    const sealed = sql.lit('enc1:%');
    const rows = await db
      .selectFrom('webhooks')
      .select(['id', 'secret', 'previous_secret'])
      .where((eb) => eb.or([eb('secret', 'not like', sealed), eb.and([eb('previous_secret', 'is not', null), eb('previous_secret', 'not like', sealed)])]))
      .limit(SEAL_BATCH)
      .execute();
    for (const r of rows) {
      await db
        .updateTable('webhooks')
        .set({
          secret: SecretCipher.isSealed(r.secret) ? r.secret : this.cipher.seal(r.secret, r.id),
          previous_secret: r.previous_secret === null || SecretCipher.isSealed(r.previous_secret) ? r.previous_secret : this.cipher.seal(r.previous_secret, r.id),
        })
        .where('id', '=', r.id)
        .where('secret', '=', r.secret)
        .where((eb) => (r.previous_secret === null ? eb('previous_secret', 'is', null) : eb('previous_secret', '=', r.previous_secret)))
        .execute();
    }
    return rows.length;
  }

  async setFailingSince(db: Executor, id: string, at: string | null): Promise<void> {
    await db.updateTable('webhooks').set({ failing_since: at }).where('id', '=', id).execute();
  }

  async remove(db: Executor, id: string): Promise<void> {
    await db.deleteFrom('webhooks').where('id', '=', id).execute();
  }

  async list(db: Executor, orgId: string, limit: number, offset: number): Promise<{ rows: WebhookRow[]; total: number }> {
    const rows = await db
      .selectFrom('webhooks')
      .select(WEBHOOK_COLUMNS)
      .where('org_id', '=', orgId)
      .orderBy('created_at', 'desc')
      .orderBy('rowid', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
    const { n } = await db
      .selectFrom('webhooks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', orgId)
      .executeTakeFirstOrThrow();
    return { rows: rows.map((r) => webhookFromStored(r, this.cipher)), total: Number(n) };
  }

  /** Every endpoint of an organization without its secrets (the export: it needs no data key). */
  async endpointsForOrg(db: Executor, orgId: string): Promise<WebhookEndpoint[]> {
    const columns = WEBHOOK_COLUMNS.filter((c): c is Exclude<(typeof WEBHOOK_COLUMNS)[number], 'secret' | 'previous_secret'> => c !== 'secret' && c !== 'previous_secret');
    const rows = await db.selectFrom('webhooks').select(columns).where('org_id', '=', orgId).execute();
    return rows.map(({ events_json, active, ...rest }) => ({ ...rest, events: JSON.parse(events_json) as string[], active: active === 1 }));
  }

  /** Every endpoint of an organization, active or not (inactive ones still queue). */
  async allForOrg(db: Executor, orgId: string): Promise<WebhookRow[]> {
    const rows = await db.selectFrom('webhooks').select(WEBHOOK_COLUMNS).where('org_id', '=', orgId).execute();
    return rows.map((r) => webhookFromStored(r, this.cipher));
  }

  /**
   * Whether some endpoint of the organization, active or not, subscribes to `type`. Events that
   * no endpoint subscribes to could never be delivered (an endpoint receives only events recorded
   * after its creation), so high-volume writers (`node.scanned`) skip them (docs/decisions.md).
   */
  async subscribes(db: Executor, orgId: string, type: string): Promise<boolean> {
    const query =
      this.dialect === 'postgres'
        ? sql<{ found: boolean }>`SELECT EXISTS (SELECT 1 FROM webhooks w WHERE w.org_id = ${orgId} AND w.events_json::jsonb @> jsonb_build_array(${type}::text)) AS found`
        : sql<{ found: number }>`SELECT EXISTS (SELECT 1 FROM webhooks w, json_each(w.events_json) e WHERE w.org_id = ${orgId} AND e.value = ${type}) AS found`;
    const { rows } = await query.execute(db);
    return Boolean(rows[0]?.found);
  }

  async maxOutboxSeq(db: Executor): Promise<number> {
    const row = await db
      .selectFrom('outbox_events')
      .select((eb) => eb.fn.coalesce(eb.fn.max('seq'), eb.lit(0)).as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  // ---- fan-out ----

  /**
   * The outbox's highest seq, and on PostgreSQL the bounds of the snapshot it was read under:
   * `xmin`, the oldest transaction still running, and `xmax`, the first not yet started (both
   * xid8). WebhookService.settledOutboxSeq says what they are for.
   */
  async outboxHighWater(db: Executor): Promise<{ seq: number; xmin?: bigint; xmax?: bigint }> {
    if (this.dialect === 'sqlite') return { seq: await this.maxOutboxSeq(db) };
    // One statement: the snapshot pg_current_snapshot() describes is the one MAX(seq) reads under.
    const { rows } = await sql<{ seq: number; xmin: string; xmax: string }>`
      SELECT (SELECT COALESCE(MAX(seq), 0) FROM outbox_events) AS seq,
             pg_snapshot_xmin(s)::text AS xmin, pg_snapshot_xmax(s)::text AS xmax
        FROM pg_current_snapshot() AS s`.execute(db);
    const row = rows[0]!;
    return { seq: Number(row.seq), xmin: BigInt(row.xmin), xmax: BigInt(row.xmax) };
  }

  /** An event's seq by its id (the webhook-id). */
  async eventSeq(db: Executor, eventId: string): Promise<number | undefined> {
    return (await db.selectFrom('outbox_events').select('seq').where('id', '=', eventId).executeTakeFirst())?.seq;
  }

  /** The fan-out cursor as committed, without locking it (the outbox pruner's bound). */
  async fanoutCursor(db: Executor): Promise<number> {
    return Number((await db.selectFrom('webhook_fanout_cursor').select('last_seq').where('id', '=', 1).executeTakeFirstOrThrow()).last_seq);
  }

  /** Of these outbox seqs, the ones a delivery (pending or finished) still refers to. */
  async referencedEvents(db: Executor, seqs: readonly number[]): Promise<Set<number>> {
    const found = new Set<number>();
    for (let i = 0; i < seqs.length; i += 500) {
      const rows = await db
        .selectFrom('webhook_deliveries')
        .select('event_seq')
        .distinct()
        .where('event_seq', 'in', seqs.slice(i, i + 500))
        .execute();
      for (const r of rows) found.add(Number(r.event_seq));
    }
    return found;
  }

  /** The fan-out cursor, locked until the transaction ends on PostgreSQL (one fan-out at a time across processes). */
  async lockFanoutCursor(db: Executor): Promise<number> {
    let query = db.selectFrom('webhook_fanout_cursor').select('last_seq').where('id', '=', 1);
    if (this.dialect === 'postgres') query = query.forUpdate();
    return (await query.executeTakeFirstOrThrow()).last_seq;
  }

  async setFanoutCursor(db: Executor, seq: number): Promise<void> {
    await db.updateTable('webhook_fanout_cursor').set({ last_seq: seq }).where('id', '=', 1).execute();
  }

  /** Events with `after` < seq ≤ `through`, oldest first. */
  async eventsAfter(db: Executor, after: number, through: number, limit: number): Promise<EventRow[]> {
    return db
      .selectFrom('outbox_events')
      .select(EVENT_COLUMNS)
      .where('seq', '>', after)
      .where('seq', '<=', through)
      .orderBy('seq')
      .limit(limit)
      .execute();
  }

  async event(db: Executor, seq: number): Promise<EventRow | undefined> {
    return db.selectFrom('outbox_events').select(EVENT_COLUMNS).where('seq', '=', seq).executeTakeFirst();
  }

  /** Queues an event for an endpoint; a second queueing of the same event is ignored. */
  async insertDelivery(
    db: Executor,
    d: Pick<DeliveryRow, 'id' | 'webhook_id' | 'event_seq' | 'event_id' | 'event_type' | 'next_attempt_at' | 'created_at'>,
  ): Promise<void> {
    await db
      .insertInto('webhook_deliveries')
      .values({ ...d, status: 'pending' })
      .onConflict((oc) => oc.doNothing())
      .execute();
  }

  // ---- deliveries ----

  async delivery(db: Executor, id: string): Promise<DeliveryRow | undefined> {
    return (await db.selectFrom('webhook_deliveries').select(DELIVERY_COLUMNS).where('id', '=', id).executeTakeFirst()) as DeliveryRow | undefined;
  }

  async deliveryByEvent(db: Executor, webhookId: string, eventId: string): Promise<DeliveryRow | undefined> {
    return (await db
      .selectFrom('webhook_deliveries')
      .select(DELIVERY_COLUMNS)
      .where('webhook_id', '=', webhookId)
      .where('event_id', '=', eventId)
      .executeTakeFirst()) as DeliveryRow | undefined;
  }

  /** The oldest pending delivery of an endpoint: strictly the next one to send. */
  async head(db: Executor, webhookId: string): Promise<DeliveryRow | undefined> {
    // The seq through the pending index first: asked for whole rows, SQLite walks the list index.
    return (await db
      .selectFrom('webhook_deliveries')
      .select(DELIVERY_COLUMNS)
      .where('seq', '=', (eb) =>
        eb
          .selectFrom('webhook_deliveries as p')
          .select('p.seq')
          .where('p.webhook_id', '=', webhookId)
          .where('p.status', '=', PENDING)
          .orderBy('p.seq')
          .limit(1),
      )
      .executeTakeFirst()) as DeliveryRow | undefined;
  }

  /** The queue head of every active endpoint that has pending deliveries, with its sender claim. */
  async heads(db: Executor): Promise<QueueHead[]> {
    // One index seek per active endpoint (a scan of all pending rows would grow with a backlog).
    return db
      .selectFrom('webhooks as w')
      .innerJoin('webhook_deliveries as d', (join) =>
        join.on('d.seq', '=', (eb) =>
          eb
            .selectFrom('webhook_deliveries as p')
            .select('p.seq')
            .whereRef('p.webhook_id', '=', 'w.id')
            .where('p.status', '=', PENDING)
            .orderBy('p.seq')
            .limit(1),
        ),
      )
      .leftJoin('webhook_claims as c', 'c.webhook_id', 'w.id')
      .select(['w.id as webhook_id', 'd.seq', 'd.next_attempt_at', 'c.claimed_until', 'c.owner as claimed_by'])
      .where('w.active', '=', 1)
      .execute();
  }

  async recordAttempt(
    db: Executor,
    attempt: AttemptRow,
    outcome: Pick<DeliveryRow, 'id' | 'status' | 'next_attempt_at' | 'last_attempt_at' | 'last_status_code' | 'last_error' | 'completed_at'>,
  ): Promise<void> {
    await db
      .insertInto('webhook_attempts')
      .values({ ...attempt, succeeded: attempt.succeeded ? 1 : 0 })
      .execute();
    const { id, ...fields } = outcome;
    await db
      .updateTable('webhook_deliveries')
      .set((eb) => ({ ...fields, attempts: eb('attempts', '+', 1), round_attempts: eb('round_attempts', '+', 1) }))
      .where('id', '=', id)
      .execute();
  }

  /** Moves a pending delivery's next attempt to `at`, keeping its place in the retry schedule. */
  async expedite(db: Executor, id: string, at: string): Promise<void> {
    await db.updateTable('webhook_deliveries').set({ next_attempt_at: at }).where('id', '=', id).where('status', '=', PENDING).execute();
  }

  async requeue(db: Executor, id: string, at: string): Promise<void> {
    await db
      .updateTable('webhook_deliveries')
      .set({ status: 'pending', round_attempts: 0, next_attempt_at: at, completed_at: null })
      .where('id', '=', id)
      .execute();
  }

  async attempts(db: Executor, deliveryId: string): Promise<AttemptRow[]> {
    const rows = await db
      .selectFrom('webhook_attempts')
      .select(['delivery_id', 'attempt', 'started_at', 'duration_ms', 'status_code', 'error', 'succeeded'])
      .where('delivery_id', '=', deliveryId)
      .orderBy('attempt')
      .execute();
    return rows.map((a) => ({ ...a, succeeded: a.succeeded === 1 }));
  }

  /** Deletes up to `limit` finished deliveries (their attempts cascade) completed before `before`. */
  async pruneFinished(db: Executor, before: string, limit: number): Promise<number> {
    const result = await db
      .deleteFrom('webhook_deliveries')
      .where('seq', 'in', (eb) =>
        eb
          .selectFrom('webhook_deliveries as f')
          .select('f.seq')
          .where('f.status', '<>', PENDING)
          .where('f.completed_at', '<', before)
          .limit(limit),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Deliveries by status and endpoints by state, for /metrics. */
  async stats(db: Executor): Promise<{ deliveries: Record<string, number>; endpoints: { active: number; inactive: number } }> {
    const deliveries: Record<string, number> = { pending: 0, succeeded: 0, failed: 0 };
    const byStatus = await db
      .selectFrom('webhook_deliveries')
      .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
      .groupBy('status')
      .execute();
    for (const row of byStatus) deliveries[row.status] = Number(row.n);
    const endpoints = { active: 0, inactive: 0 };
    const byState = await db
      .selectFrom('webhooks')
      .select((eb) => ['active', eb.fn.countAll<number>().as('n')])
      .groupBy('active')
      .execute();
    for (const row of byState) endpoints[row.active ? 'active' : 'inactive'] = Number(row.n);
    return { deliveries, endpoints };
  }

  async listDeliveries(
    db: Executor,
    webhookId: string,
    filter: { status?: DeliveryStatus | undefined; limit: number; offset: number },
  ): Promise<{ rows: DeliveryRow[]; total: number }> {
    let rows = db.selectFrom('webhook_deliveries').select(DELIVERY_COLUMNS).where('webhook_id', '=', webhookId);
    let count = db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('webhook_id', '=', webhookId);
    if (filter.status) {
      rows = rows.where('status', '=', filter.status);
      count = count.where('status', '=', filter.status);
    }
    const page = await rows.orderBy('seq', 'desc').limit(filter.limit).offset(filter.offset).execute();
    const { n } = await count.executeTakeFirstOrThrow();
    return { rows: page as DeliveryRow[], total: Number(n) };
  }

  // ---- sender claims (processes sharing a PostgreSQL database) ----

  /**
   * Takes the endpoint's sender claim for `owner` until `until`, if no one else holds it at
   * `now`. One conditional upsert: two processes claiming at once serialize on the row, and the
   * second finds it held. (Within a process one loop per endpoint sends: its own claim is its to renew.)
   */
  async claim(db: Executor, webhookId: string, owner: string, now: string, until: string): Promise<boolean> {
    const row = await db
      .insertInto('webhook_claims')
      .values({ webhook_id: webhookId, owner, claimed_until: until })
      .onConflict((oc) =>
        oc
          .column('webhook_id')
          .doUpdateSet({ owner, claimed_until: until })
          .where((eb) => eb.or([eb('webhook_claims.claimed_until', '<=', now), eb('webhook_claims.owner', '=', owner)])),
      )
      .returning('owner')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Who holds the endpoint's claim (locked until the transaction ends, so it cannot change meanwhile). */
  async claimHolder(db: Executor, webhookId: string): Promise<{ owner: string; claimed_until: string } | undefined> {
    let query = db.selectFrom('webhook_claims').select(['owner', 'claimed_until']).where('webhook_id', '=', webhookId);
    if (this.dialect === 'postgres') query = query.forUpdate();
    return query.executeTakeFirst();
  }

  /** Extends `owner`'s claim on the endpoint to `until`. */
  async renewClaim(db: Executor, webhookId: string, owner: string, until: string): Promise<void> {
    await db.updateTable('webhook_claims').set({ claimed_until: until }).where('webhook_id', '=', webhookId).where('owner', '=', owner).execute();
  }

  /** Frees `owner`'s claim on the endpoint (or on every endpoint) from `now` on. */
  async releaseClaims(db: Executor, owner: string, now: string, webhookId?: string): Promise<void> {
    let query = db.updateTable('webhook_claims').set({ claimed_until: now }).where('owner', '=', owner).where('claimed_until', '>', now);
    if (webhookId !== undefined) query = query.where('webhook_id', '=', webhookId);
    await query.execute();
  }
}

/**
 * The subscription check on a SQLite connection of its own, synchronous, for the scan path's
 * hand-written writer (scans/writer.ts); everything else asks WebhooksRepo.subscribes.
 */
export function sqliteSubscriptionCheck(db: Database): (orgId: string, type: string) => boolean {
  const exists = db
    .prepare('SELECT EXISTS (SELECT 1 FROM webhooks w, json_each(w.events_json) e WHERE w.org_id = ? AND e.value = ?)')
    .pluck();
  return (orgId, type) => exists.get(orgId, type) === 1;
}
