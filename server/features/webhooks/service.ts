import { randomBytes } from 'node:crypto';
import type { BlockList } from 'node:net';
import { hostname } from 'node:os';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import type { WebhookSettings } from '../../config.ts';
import type { Executor, Store } from '../../db/store.ts';
import type { Clock } from '../../platform/clock.ts';
import { ConflictError, NotFoundError, ValidationError, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { Outbox } from '../../platform/outbox.ts';
import { WEBHOOK_TEST_EVENT, type DeliveryT, type WebhookT } from '../../schemas/webhooks.ts';
import { isPrivateHost } from './address.ts';
import type { DeliveryRow, DeliveryStatus, EventRow, QueueHead, WebhookEndpoint, WebhookRow, WebhooksRepo } from './repo.ts';
import type { OutgoingMessage, SendResult } from './sender.ts';

/** Retry delays after the 1st, 2nd, … failed attempt, as multiples of the base (5 s): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const RETRY_STEPS = [1, 60, 360, 1440, 3600, 7200, 7200] as const;
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

export interface WebhookServiceDeps {
  store: Store;
  repo: WebhooksRepo;
  outbox: Outbox;
  clock: Clock;
  settings: WebhookSettings;
  privateList: BlockList;
  /** Jitter source in [0, 1); injectable for tests. */
  random?: () => number;
}

export interface CreateWebhookInput {
  url: string;
  events: string[];
  description?: string | null | undefined;
  active?: boolean | undefined;
}

export type UpdateWebhookInput = Partial<CreateWebhookInput>;

/** A delivery due now, with everything needed to send it. */
export interface DeliveryJob {
  webhook: WebhookRow;
  delivery: DeliveryRow;
  event: EventRow;
}

const FANOUT_CHUNK = 500;

/** Bookkeeping commits that may be redone after a power cut (docs/webhooks.md, "Durability"). */
const DEFERRED = { flush: 'deferred' } as const;

export function newSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** The body every attempt of an event sends, byte for byte. */
export function eventBody(event: Pick<EventRow, 'type' | 'created_at' | 'data_json'>): string {
  return `{"type":${JSON.stringify(event.type)},"timestamp":${JSON.stringify(event.created_at)},"data":${event.data_json}}`;
}

/**
 * Webhook endpoints and their delivery queues. Fan-out turns outbox events into one delivery
 * per subscribed endpoint (exactly once, with a cursor advanced in the same transaction); the
 * dispatcher (dispatcher.ts) sends each endpoint's queue in order and reports outcomes here.
 *
 * On PostgreSQL any number of processes share the queues: a process sends an endpoint's queue
 * head only while it holds the endpoint's sender claim (webhook_claims), taken when it finds a
 * delivery due, renewed with each outcome and given up when nothing is due, so each attempt is
 * made by one process and each endpoint still gets its deliveries one at a time, in order. A
 * claim outlives a process that dies mid-attempt by at most `claimMs`; then another process
 * retries the delivery, under the same webhook-id.
 * On SQLite one process owns the file: it sends without claims, as it always did.
 */
export class WebhookService {
  private readonly deps: WebhookServiceDeps;
  private readonly listeners = new Set<() => void>();
  /** Whether processes share the queues (PostgreSQL), so that sending needs a claim. */
  private readonly claims: boolean;
  /** This service's name on the claims it takes (host and pid, for an operator reading webhook_claims). */
  readonly claimOwner: string;
  /** How long a claim lasts: an attempt ends within the timeout, its outcome is recorded well within another. */
  readonly claimMs: number;
  /** Endpoints whose sender claim this process holds, and until when (epoch ms). */
  private readonly held = new Map<string, number>();
  /** PostgreSQL: high waters read by earlier fan-outs, not yet settled (settledOutboxSeq). */
  private highWaters: Array<{ xmax: bigint; seq: number }> = [];
  /** The highest outbox seq known to be settled, and the highest seen. */
  private settledSeq = 0;
  private seenSeq = 0;

  constructor(deps: WebhookServiceDeps) {
    this.deps = deps;
    this.claims = deps.store.dialect === 'postgres';
    this.claimOwner = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
    this.claimMs = 2 * deps.settings.timeoutMs;
  }

  /** Told when a queue changed outside the outbox (redelivery, re-enable): wakes the dispatcher. */
  onQueueChanged(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private queueChanged(): void {
    this.listeners.forEach((l) => l());
  }

  // ---------------------------------------------------------------- endpoints

  toApi(row: WebhookRow): WebhookT {
    const graceOver = row.previous_secret_expires_at !== null && row.previous_secret_expires_at <= this.now();
    return {
      id: row.id,
      url: row.url,
      events: row.events,
      description: row.description,
      active: row.active,
      created_at: row.created_at,
      updated_at: row.updated_at,
      failing_since: row.failing_since,
      disabled: row.disabled_at ? { note: 'webhook.disabled', at: row.disabled_at, reason: row.disabled_reason ?? '' } : null,
      previous_secret_expires_at: graceOver ? null : row.previous_secret_expires_at,
    };
  }

  async create(orgId: string, input: CreateWebhookInput): Promise<{ webhook: WebhookRow; secret: string }> {
    this.checkUrl(input.url);
    const { repo, store } = this.deps;
    return store.transaction(async (tx) => {
      const now = this.now();
      const row: WebhookRow = {
        id: newId(),
        org_id: orgId,
        url: input.url,
        events: unique(input.events),
        description: input.description ?? null,
        active: input.active ?? true,
        secret: newSecret(),
        previous_secret: null,
        previous_secret_expires_at: null,
        start_seq: await repo.maxOutboxSeq(tx),
        failing_since: null,
        disabled_at: null,
        disabled_reason: null,
        created_at: now,
        updated_at: now,
      };
      await repo.insert(tx, row);
      return { webhook: row, secret: row.secret };
    });
  }

  /**
   * An endpoint from an organization's export (waymark import): as it was, but with a new
   * signing secret (the export never carries one), returned for the receiver. It delivers the
   * events recorded from now on.
   */
  async restoreIn(tx: Executor, row: Pick<WebhookRow, 'id' | 'org_id' | 'url' | 'events' | 'description' | 'active' | 'created_at' | 'updated_at'>): Promise<string> {
    this.checkUrl(row.url);
    const secret = newSecret();
    await this.deps.repo.insert(tx, {
      ...row,
      events: unique(row.events),
      secret,
      previous_secret: null,
      previous_secret_expires_at: null,
      start_seq: await this.deps.repo.maxOutboxSeq(tx),
      failing_since: null,
      disabled_at: null,
      disabled_reason: null,
    });
    return secret;
  }

  /** Every endpoint of an organization without its secrets (the export). */
  endpoints(orgId: string, db: Executor = this.deps.store.db): Promise<WebhookEndpoint[]> {
    return this.deps.repo.endpointsForOrg(db, orgId);
  }

  /**
   * The start-up step that seals signing secrets still stored in clear (docs/decisions.md,
   * "Webhook secrets at rest"): a transaction per SEAL_BATCH endpoints, so a crash keeps what was
   * sealed and the next start seals the rest. Returns how many endpoints it sealed.
   */
  async sealStoredSecrets(): Promise<number> {
    let total = 0;
    for (;;) {
      const sealed = await this.deps.store.transaction((tx) => this.deps.repo.sealClearSecrets(tx));
      total += sealed;
      if (sealed === 0) return total;
    }
  }

  /** Every endpoint of an organization (the export). */
  all(orgId: string, db: Executor = this.deps.store.db): Promise<WebhookRow[]> {
    return this.deps.repo.allForOrg(db, orgId);
  }

  /** The organization's endpoint, read on `db` (the store's by default, or a transaction). */
  async get(orgId: string, id: string, db: Executor = this.deps.store.db): Promise<WebhookRow> {
    const row = await this.deps.repo.getForOrg(db, orgId, id);
    if (!row) throw notFound.webhook();
    return row;
  }

  list(orgId: string, limit: number, offset: number): Promise<{ rows: WebhookRow[]; total: number }> {
    return this.deps.repo.list(this.deps.store.db, orgId, limit, offset);
  }

  async update(orgId: string, id: string, input: UpdateWebhookInput): Promise<WebhookRow> {
    if (input.url !== undefined) this.checkUrl(input.url);
    const { repo, store } = this.deps;
    const next = await store.transaction(async (tx) => {
      const row = await this.get(orgId, id, tx);
      const next: WebhookRow = { ...row, updated_at: this.now() };
      if (input.url !== undefined) next.url = input.url;
      if (input.events !== undefined) next.events = unique(input.events);
      if (input.description !== undefined) next.description = input.description;
      if (input.active !== undefined) {
        next.active = input.active;
        if (input.active && !row.active) {
          // Re-enabling clears the automatic disable and retries the queue head at once.
          next.disabled_at = null;
          next.disabled_reason = null;
          next.failing_since = null;
          const head = await repo.head(tx, row.id);
          if (head && head.next_attempt_at !== null && head.next_attempt_at > next.updated_at) await repo.requeue(tx, head.id, next.updated_at);
        }
      }
      await repo.update(tx, next);
      return next;
    });
    this.queueChanged();
    return next;
  }

  async remove(orgId: string, id: string): Promise<void> {
    const { repo, store } = this.deps;
    await store.transaction(async (tx) => {
      const row = await this.get(orgId, id, tx);
      await repo.remove(tx, row.id);
    });
  }

  /** New secret; the old one keeps signing (alongside) for 24 hours. */
  async rotateSecret(orgId: string, id: string): Promise<{ webhook: WebhookRow; secret: string }> {
    const { repo, store } = this.deps;
    return store.transaction(async (tx) => {
      const row = await this.get(orgId, id, tx);
      const nowMs = this.deps.clock.now();
      const next: WebhookRow = {
        ...row,
        secret: newSecret(),
        previous_secret: row.secret,
        previous_secret_expires_at: new Date(nowMs + ROTATION_GRACE_MS).toISOString(),
        updated_at: new Date(nowMs).toISOString(),
      };
      await repo.update(tx, next);
      return { webhook: next, secret: next.secret };
    });
  }

  /**
   * Queues a `webhook.test` event for this endpoint only and returns its delivery. The test
   * takes its place in the endpoint's ordered queue; if the queue head is waiting to be
   * retried, it is retried now (a test is how a user checks a fixed receiver).
   */
  async sendTest(orgId: string, id: string): Promise<DeliveryRow> {
    const { repo, outbox, store } = this.deps;
    const row = await this.get(orgId, id);
    if (!row.active) throw new ConflictError('Webhook is not active');
    const now = this.now();
    // Queued here, with the event, rather than by the fan-out (which may be waiting for other
    // transactions, settledOutboxSeq); the fan-out finds it queued and leaves it.
    const delivery = await store.transaction(async (tx) => {
      const eventId = await outbox.record(tx, orgId, WEBHOOK_TEST_EVENT, {
        webhook_id: row.id,
        url: row.url,
        message: 'This is a test event sent from Waymark.',
      });
      const seq = await repo.eventSeq(tx, eventId);
      if (seq === undefined) throw new Error('the test event was not recorded');
      await repo.insertDelivery(tx, { id: newDeliveryId(), webhook_id: row.id, event_seq: seq, event_id: eventId, event_type: WEBHOOK_TEST_EVENT, next_attempt_at: now, created_at: now });
      return (await repo.deliveryByEvent(tx, row.id, eventId))!;
    });
    const head = await repo.head(store.db, row.id);
    if (head && head.id !== delivery.id && head.next_attempt_at !== null && head.next_attempt_at > now) {
      await repo.expedite(store.db, head.id, now);
      this.queueChanged();
    }
    return delivery;
  }

  private checkUrl(url: string): void {
    if (!this.deps.settings.publicOnly) return;
    const host = new URL(url).hostname;
    if (isPrivateHost(this.deps.privateList, host)) {
      throw new ValidationError({ url: 'must not point to a private or loopback address on this instance' });
    }
  }

  // ---------------------------------------------------------------- deliveries (API)

  async deliveryToApi(row: DeliveryRow): Promise<DeliveryT> {
    const attempts = await this.deps.repo.attempts(this.deps.store.db, row.id);
    return {
      id: row.id,
      webhook_id: row.webhook_id,
      event_id: row.event_id,
      event_type: row.event_type,
      status: row.status,
      attempt_count: row.attempts,
      next_attempt_at: row.status === 'pending' ? row.next_attempt_at : null,
      last_attempt_at: row.last_attempt_at,
      last_status_code: row.last_status_code,
      last_error: row.last_error,
      completed_at: row.completed_at,
      created_at: row.created_at,
      attempts: attempts.map((a) => ({
        attempt: a.attempt,
        at: a.started_at,
        status_code: a.status_code,
        duration_ms: a.duration_ms,
        error: a.error,
        succeeded: a.succeeded,
      })),
    };
  }

  async listDeliveries(
    orgId: string,
    webhookId: string,
    filter: { status?: DeliveryStatus | undefined; limit: number; offset: number },
  ): Promise<{ rows: DeliveryRow[]; total: number }> {
    const row = await this.get(orgId, webhookId);
    return this.deps.repo.listDeliveries(this.deps.store.db, row.id, filter);
  }

  async getDelivery(orgId: string, webhookId: string, deliveryId: string, db: Executor = this.deps.store.db): Promise<DeliveryRow> {
    const row = await this.get(orgId, webhookId, db);
    const delivery = await this.deps.repo.delivery(db, deliveryId);
    if (!delivery || delivery.webhook_id !== row.id) throw new NotFoundError('Delivery not found');
    return delivery;
  }

  /**
   * Sends a delivery again, with the same webhook-id, as soon as possible and with a fresh retry
   * schedule. A pending delivery is just moved up to now.
   */
  async redeliver(orgId: string, webhookId: string, deliveryId: string): Promise<DeliveryRow> {
    const { repo, store } = this.deps;
    const result = await store.transaction(async (tx) => {
      const delivery = await this.getDelivery(orgId, webhookId, deliveryId, tx);
      await repo.requeue(tx, delivery.id, this.now());
      return (await repo.delivery(tx, delivery.id))!;
    });
    this.queueChanged();
    return result;
  }

  // ---------------------------------------------------------------- fan-out and sending (worker)

  /**
   * Turns outbox events after the cursor into deliveries, a chunk per transaction. Each chunk
   * inserts its deliveries and advances the cursor atomically: a crash repeats nothing and
   * loses nothing. Endpoints get events recorded after they were created; inactive endpoints
   * still queue (sent in order once re-enabled). `webhook.test` goes only to its endpoint.
   * Processes sharing a database fan out one at a time (the cursor row is locked), and only
   * events no transaction can still slip in before (settledOutboxSeq).
   */
  async fanOut(): Promise<number> {
    const { repo, store } = this.deps;
    const through = await this.settledOutboxSeq();
    let total = 0;
    for (;;) {
      const count = await store.transaction(async (tx) => {
        const cursor = await repo.lockFanoutCursor(tx);
        const events = await repo.eventsAfter(tx, cursor, through, FANOUT_CHUNK);
        if (events.length === 0) return 0;
        const byOrg = new Map<string, WebhookRow[]>();
        const now = this.now();
        for (const event of events) {
          let endpoints = byOrg.get(event.org_id);
          if (!endpoints) {
            endpoints = await repo.allForOrg(tx, event.org_id);
            byOrg.set(event.org_id, endpoints);
          }
          for (const w of endpoints) {
            if (event.seq <= w.start_seq) continue;
            if (event.type === WEBHOOK_TEST_EVENT) {
              if ((JSON.parse(event.data_json) as { webhook_id?: string }).webhook_id !== w.id) continue;
            } else if (!w.events.includes(event.type)) {
              continue;
            }
            await repo.insertDelivery(tx, {
              id: newDeliveryId(),
              webhook_id: w.id,
              event_seq: event.seq,
              event_id: event.id,
              event_type: event.type,
              next_attempt_at: now,
              created_at: now,
            });
          }
        }
        await repo.setFanoutCursor(tx, events[events.length - 1]!.seq);
        return events.length;
      }, DEFERRED);
      total += count;
      if (count < FANOUT_CHUNK) return total;
    }
  }

  /**
   * The highest outbox seq below which no event can still appear. On SQLite (one writer) events
   * commit in seq order: the highest seq. On PostgreSQL an event's seq is drawn when it is
   * inserted, not when its transaction commits, so an event can appear after one with a higher
   * seq, and a cursor moved past the later one would skip it for ever. The highest seq read under
   * a snapshot is settled once every transaction that could have drawn a lower one has ended:
   * those were running when the snapshot was taken, so their ids are below its xmax, and they
   * have all ended once the oldest running transaction (xmin) is at or past that xmax. Each call
   * reads a new high water and settles the ones whose transactions have ended; no lock is taken,
   * so event writers (the scan path) never wait for the fan-out.
   */
  private async settledOutboxSeq(): Promise<number> {
    const high = await this.deps.repo.outboxHighWater(this.deps.store.db);
    this.seenSeq = Math.max(this.seenSeq, high.seq);
    if (high.xmin === undefined || high.xmax === undefined) {
      this.settledSeq = high.seq;
      return high.seq;
    }
    this.highWaters.push({ xmax: high.xmax, seq: high.seq });
    const xmin = high.xmin;
    for (const h of this.highWaters) if (h.xmax <= xmin) this.settledSeq = Math.max(this.settledSeq, h.seq);
    // Behind a long transaction the list would grow: the newest marks settle as soon as the old ones would.
    this.highWaters = this.highWaters.filter((h) => h.xmax > xmin && h.seq > this.settledSeq).slice(-100);
    return this.settledSeq;
  }

  /** Whether events were seen that are not settled yet (the dispatcher looks again shortly). */
  fanOutBehind(): boolean {
    return this.seenSeq > this.settledSeq;
  }

  /**
   * Forgets finished deliveries older than the retention period, at most `limit` per call (so a
   * large backlog is deleted in steps, not in one long transaction). Returns how many went.
   */
  pruneFinished(limit = 2000): Promise<number> {
    const before = new Date(this.deps.clock.now() - this.deps.settings.retentionMs).toISOString();
    return this.deps.store.transaction((tx) => this.deps.repo.pruneFinished(tx, before, limit), DEFERRED);
  }

  stats(): ReturnType<WebhooksRepo['stats']> {
    return this.deps.repo.stats(this.deps.store.db);
  }

  /** Queue heads of active endpoints (one per endpoint: per-endpoint order is strict), with their claims. */
  queueHeads(): Promise<QueueHead[]> {
    return this.deps.repo.heads(this.deps.store.db);
  }

  /** Whether `head` may be sent by this process now: not held by another process's unexpired claim. */
  claimedElsewhere(head: QueueHead, now: number): boolean {
    return this.claims && head.claimed_until !== null && head.claimed_by !== this.claimOwner && Date.parse(head.claimed_until) > now;
  }

  /**
   * The endpoint's next delivery if it is due now (and the endpoint is active), under the
   * endpoint's sender claim when processes share the queues. A process keeps the claim while it
   * has due deliveries for the endpoint (each outcome renews it) and gives it up when nothing is
   * due: one claim per run of attempts, not per attempt.
   */
  async nextDue(webhookId: string): Promise<DeliveryJob | undefined> {
    for (;;) {
      const next = await this.takeDue(webhookId);
      if (next !== 'closed') return next;
    }
  }

  /** One look at the queue head: a job, nothing due, or 'closed' (the head was closed, look again). */
  private async takeDue(webhookId: string): Promise<DeliveryJob | undefined | 'closed'> {
    const { repo, store } = this.deps;
    const nowMs = this.deps.clock.now();
    const now = new Date(nowMs).toISOString();
    let found = await this.dueHead(store.db, webhookId, now);
    if (this.claims) {
      if (!found) {
        await this.releaseClaim(webhookId, now);
        return undefined;
      }
      // A claim this process renewed recently still covers a whole attempt; otherwise take it.
      if ((this.held.get(webhookId) ?? 0) - this.deps.settings.timeoutMs <= nowMs) {
        const until = nowMs + this.claimMs;
        if (!(await repo.claim(store.db, webhookId, this.claimOwner, now, new Date(until).toISOString()))) {
          this.held.delete(webhookId);
          return undefined;
        }
        this.held.set(webhookId, until);
        // Look again under the claim: the previous holder may just have finished that head.
        found = await this.dueHead(store.db, webhookId, now);
        if (!found) {
          await this.releaseClaim(webhookId, now);
          return undefined;
        }
      }
    }
    if (!found) return undefined;
    const event = await repo.event(store.db, found.delivery.event_seq);
    if (event) return { ...found, event };
    // The outbox row is gone (should not happen): close the delivery rather than block the queue.
    const { delivery } = found;
    await store.transaction(async (tx) => {
      await repo.recordAttempt(
        tx,
        { delivery_id: delivery.id, attempt: delivery.attempts + 1, started_at: now, duration_ms: 0, status_code: null, error: 'Event no longer exists', succeeded: false },
        { id: delivery.id, status: 'failed', next_attempt_at: null, last_attempt_at: now, last_status_code: null, last_error: 'Event no longer exists', completed_at: now },
      );
    }, DEFERRED);
    return 'closed';
  }

  /** The active endpoint's queue head if it is due at `now`. */
  private async dueHead(db: Executor, webhookId: string, now: string): Promise<{ webhook: WebhookRow; delivery: DeliveryRow } | undefined> {
    const webhook = await this.deps.repo.get(db, webhookId);
    if (!webhook || !webhook.active) return undefined;
    const delivery = await this.deps.repo.head(db, webhookId);
    if (!delivery || (delivery.next_attempt_at !== null && delivery.next_attempt_at > now)) return undefined;
    return { webhook, delivery };
  }

  /** Gives up this process's claim on one endpoint, if it holds one. */
  private async releaseClaim(webhookId: string, now: string): Promise<void> {
    if (!this.held.delete(webhookId)) return;
    await this.deps.repo.releaseClaims(this.deps.store.db, this.claimOwner, now, webhookId);
  }

  /** Gives up this process's claims (stopping: another process may send at once instead of waiting for them to expire). */
  async releaseClaims(): Promise<void> {
    if (!this.claims) return;
    this.held.clear();
    await this.deps.repo.releaseClaims(this.deps.store.db, this.claimOwner, this.now());
  }

  /** The signed request for one attempt: webhook-id = the event id, signed with every live secret. */
  buildMessage(job: DeliveryJob): OutgoingMessage {
    const body = eventBody(job.event);
    const at = new Date(this.deps.clock.now());
    const secrets = [job.webhook.secret];
    if (job.webhook.previous_secret && job.webhook.previous_secret_expires_at && job.webhook.previous_secret_expires_at > at.toISOString()) {
      secrets.push(job.webhook.previous_secret);
    }
    const signature = secrets.map((s) => new StandardWebhook(s).sign(job.event.id, at, body)).join(' ');
    return {
      url: job.webhook.url,
      body,
      headers: {
        'webhook-id': job.event.id,
        'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
        'webhook-signature': signature,
      },
    };
  }

  /**
   * Records an attempt's outcome: success, a retry at the next back-off step, or give-up; may
   * disable the endpoint. With claims, only while this process still holds the endpoint's claim
   * (one that expired and went to another process means that process's attempt is the one of
   * record), which the outcome renews. Returns whether the outcome was recorded.
   */
  async recordOutcome(job: DeliveryJob, result: SendResult, startedAtMs: number): Promise<boolean> {
    const { repo, clock, settings, store } = this.deps;
    const webhookId = job.webhook.id;
    const renewed = this.claims ? clock.now() + this.claimMs : 0;
    const recorded = await store.transaction(async (tx) => {
      if (this.claims && (await repo.claimHolder(tx, webhookId))?.owner !== this.claimOwner) return false;
      const webhook = await repo.get(tx, webhookId);
      const delivery = await repo.delivery(tx, job.delivery.id);
      if (!webhook || !delivery) return false; // deleted meanwhile
      const nowMs = clock.now();
      const now = new Date(nowMs).toISOString();
      if (this.claims) await repo.renewClaim(tx, webhookId, this.claimOwner, new Date(renewed).toISOString());
      const succeeded = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
      const round = delivery.round_attempts + 1;
      let status: DeliveryStatus = 'pending';
      let next: string | null = null;
      if (succeeded) status = 'succeeded';
      else if (round > RETRY_STEPS.length) status = 'failed';
      else next = new Date(nowMs + this.retryDelay(round)).toISOString();
      await repo.recordAttempt(
        tx,
        {
          delivery_id: delivery.id,
          attempt: delivery.attempts + 1,
          started_at: new Date(startedAtMs).toISOString(),
          duration_ms: result.durationMs,
          status_code: result.statusCode,
          error: result.error,
          succeeded,
        },
        {
          id: delivery.id,
          status,
          next_attempt_at: next,
          last_attempt_at: now,
          last_status_code: result.statusCode,
          last_error: result.error,
          completed_at: status === 'pending' ? null : now,
        },
      );
      if (succeeded) {
        if (webhook.failing_since !== null) await repo.setFailingSince(tx, webhook.id, null);
        return true;
      }
      const since = webhook.failing_since ?? now;
      if (webhook.failing_since === null) await repo.setFailingSince(tx, webhook.id, now);
      if (webhook.active && nowMs - Date.parse(since) >= settings.disableAfterMs) {
        const disabled: WebhookRow = {
          ...webhook,
          failing_since: since,
          active: false,
          disabled_at: now,
          disabled_reason: `Every delivery since ${since} failed (last error: ${result.error ?? 'unknown'}). Fix the receiver and set active to true to resume; queued events are kept.`,
          updated_at: now,
        };
        await repo.update(tx, disabled);
        await this.deps.outbox.record(tx, webhook.org_id, 'webhook.disabled', this.toApi(disabled));
      }
      return true;
    }, DEFERRED);
    if (this.claims) {
      if (recorded) this.held.set(webhookId, renewed);
      else this.held.delete(webhookId);
    }
    return recorded;
  }

  /** Back-off after the n-th failed attempt of a round: the step × base, ±20 % jitter. */
  retryDelay(failedAttempts: number): number {
    const step = RETRY_STEPS[Math.min(failedAttempts, RETRY_STEPS.length) - 1]!;
    const jitter = 0.8 + 0.4 * (this.deps.random ?? Math.random)();
    return Math.round(step * this.deps.settings.retryBaseMs * jitter);
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}

function newDeliveryId(): string {
  return `msg_${newId().replaceAll('-', '')}`;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
