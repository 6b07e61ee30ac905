import { randomBytes } from 'node:crypto';
import type { BlockList } from 'node:net';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import type { WebhookSettings } from '../../config.ts';
import type { Clock } from '../../platform/clock.ts';
import { ConflictError, NotFoundError, ValidationError, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { LegacyOutbox } from '../../platform/legacyOutbox.ts';
import { WEBHOOK_TEST_EVENT, type DeliveryT, type WebhookT } from '../../schemas/webhooks.ts';
import { isPrivateHost } from './address.ts';
import type { DeliveryRow, DeliveryStatus, EventRow, QueueHead, WebhookRow, WebhooksRepo } from './repo.ts';
import type { OutgoingMessage, SendResult } from './sender.ts';

/** Retry delays after the 1st, 2nd, … failed attempt, as multiples of the base (5 s): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const RETRY_STEPS = [1, 60, 360, 1440, 3600, 7200, 7200] as const;
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

export interface WebhookServiceDeps {
  repo: WebhooksRepo;
  outbox: LegacyOutbox;
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
 */
export class WebhookService {
  private readonly deps: WebhookServiceDeps;
  private readonly listeners = new Set<() => void>();

  constructor(deps: WebhookServiceDeps) {
    this.deps = deps;
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

  create(orgId: string, input: CreateWebhookInput): { webhook: WebhookRow; secret: string } {
    this.checkUrl(input.url);
    const { repo } = this.deps;
    return repo.transaction(() => {
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
        start_seq: repo.maxOutboxSeq(),
        failing_since: null,
        disabled_at: null,
        disabled_reason: null,
        created_at: now,
        updated_at: now,
      };
      repo.insert(row);
      return { webhook: row, secret: row.secret };
    });
  }

  get(orgId: string, id: string): WebhookRow {
    const row = this.deps.repo.getForOrg(orgId, id);
    if (!row) throw notFound.webhook();
    return row;
  }

  list(orgId: string, limit: number, offset: number): { rows: WebhookRow[]; total: number } {
    return this.deps.repo.list(orgId, limit, offset);
  }

  update(orgId: string, id: string, input: UpdateWebhookInput): WebhookRow {
    if (input.url !== undefined) this.checkUrl(input.url);
    const { repo } = this.deps;
    const next = repo.transaction(() => {
      const row = this.get(orgId, id);
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
          const head = repo.head(row.id);
          if (head && head.next_attempt_at !== null && head.next_attempt_at > next.updated_at) repo.requeue(head.id, next.updated_at);
        }
      }
      repo.update(next);
      return next;
    });
    this.queueChanged();
    return next;
  }

  remove(orgId: string, id: string): void {
    const { repo } = this.deps;
    repo.transaction(() => {
      const row = this.get(orgId, id);
      repo.remove(row.id);
    });
  }

  /** New secret; the old one keeps signing (alongside) for 24 hours. */
  rotateSecret(orgId: string, id: string): { webhook: WebhookRow; secret: string } {
    const { repo } = this.deps;
    return repo.transaction(() => {
      const row = this.get(orgId, id);
      const nowMs = this.deps.clock.now();
      const next: WebhookRow = {
        ...row,
        secret: newSecret(),
        previous_secret: row.secret,
        previous_secret_expires_at: new Date(nowMs + ROTATION_GRACE_MS).toISOString(),
        updated_at: new Date(nowMs).toISOString(),
      };
      repo.update(next);
      return { webhook: next, secret: next.secret };
    });
  }

  /**
   * Queues a `webhook.test` event for this endpoint only and returns its delivery. The test
   * takes its place in the endpoint's ordered queue; if the queue head is waiting to be
   * retried, it is retried now (a test is how a user checks a fixed receiver).
   */
  sendTest(orgId: string, id: string): DeliveryRow {
    const { repo, outbox } = this.deps;
    const row = this.get(orgId, id);
    if (!row.active) throw new ConflictError('Webhook is not active');
    const eventId = repo.transaction(() =>
      outbox.record(orgId, WEBHOOK_TEST_EVENT, {
        webhook_id: row.id,
        url: row.url,
        message: 'This is a test event sent from Waymark.',
      }),
    );
    this.fanOut();
    const delivery = repo.deliveryByEvent(row.id, eventId);
    if (!delivery) throw new Error('test delivery was not queued');
    const head = repo.head(row.id);
    const now = this.now();
    if (head && head.id !== delivery.id && head.next_attempt_at !== null && head.next_attempt_at > now) {
      repo.expedite(head.id, now);
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

  deliveryToApi(row: DeliveryRow): DeliveryT {
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
      attempts: this.deps.repo.attempts(row.id).map((a) => ({
        attempt: a.attempt,
        at: a.started_at,
        status_code: a.status_code,
        duration_ms: a.duration_ms,
        error: a.error,
        succeeded: a.succeeded,
      })),
    };
  }

  listDeliveries(
    orgId: string,
    webhookId: string,
    filter: { status?: DeliveryStatus | undefined; limit: number; offset: number },
  ): { rows: DeliveryRow[]; total: number } {
    const row = this.get(orgId, webhookId);
    return this.deps.repo.listDeliveries(row.id, filter);
  }

  getDelivery(orgId: string, webhookId: string, deliveryId: string): DeliveryRow {
    const row = this.get(orgId, webhookId);
    const delivery = this.deps.repo.delivery(deliveryId);
    if (!delivery || delivery.webhook_id !== row.id) throw new NotFoundError('Delivery not found');
    return delivery;
  }

  /**
   * Sends a delivery again, with the same webhook-id, as soon as possible and with a fresh retry
   * schedule. A pending delivery is just moved up to now.
   */
  redeliver(orgId: string, webhookId: string, deliveryId: string): DeliveryRow {
    const { repo } = this.deps;
    const result = repo.transaction(() => {
      const delivery = this.getDelivery(orgId, webhookId, deliveryId);
      repo.requeue(delivery.id, this.now());
      return repo.delivery(delivery.id)!;
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
   */
  fanOut(): number {
    const { repo } = this.deps;
    let total = 0;
    for (;;) {
      const count = repo.relaxedTransaction(() => {
        const cursor = repo.fanoutCursor();
        const events = repo.eventsAfter(cursor, FANOUT_CHUNK);
        if (events.length === 0) return 0;
        const byOrg = new Map<string, WebhookRow[]>();
        const now = this.now();
        for (const event of events) {
          let endpoints = byOrg.get(event.org_id);
          if (!endpoints) {
            endpoints = repo.allForOrg(event.org_id);
            byOrg.set(event.org_id, endpoints);
          }
          for (const w of endpoints) {
            if (event.seq <= w.start_seq) continue;
            if (event.type === WEBHOOK_TEST_EVENT) {
              if ((JSON.parse(event.data_json) as { webhook_id?: string }).webhook_id !== w.id) continue;
            } else if (!w.events.includes(event.type)) {
              continue;
            }
            repo.insertDelivery({
              id: `msg_${newId().replaceAll('-', '')}`,
              webhook_id: w.id,
              event_seq: event.seq,
              event_id: event.id,
              event_type: event.type,
              next_attempt_at: now,
              created_at: now,
            });
          }
        }
        repo.setFanoutCursor(events[events.length - 1]!.seq);
        return events.length;
      });
      total += count;
      if (count < FANOUT_CHUNK) return total;
    }
  }

  /**
   * Forgets finished deliveries older than the retention period, at most `limit` per call (so a
   * large backlog is deleted in steps, not in one long transaction). Returns how many went.
   */
  pruneFinished(limit = 2000): number {
    const before = new Date(this.deps.clock.now() - this.deps.settings.retentionMs).toISOString();
    return this.deps.repo.relaxedTransaction(() => this.deps.repo.pruneFinished(before, limit));
  }

  stats(): ReturnType<WebhooksRepo['stats']> {
    return this.deps.repo.stats();
  }

  /** Queue heads of active endpoints (one per endpoint: per-endpoint order is strict). */
  queueHeads(): QueueHead[] {
    return this.deps.repo.heads();
  }

  /** The endpoint's next delivery if it is due now (and the endpoint is active). */
  nextDue(webhookId: string): DeliveryJob | undefined {
    const { repo } = this.deps;
    const webhook = repo.get(webhookId);
    if (!webhook || !webhook.active) return undefined;
    const delivery = repo.head(webhookId);
    if (!delivery || (delivery.next_attempt_at !== null && delivery.next_attempt_at > this.now())) return undefined;
    const event = repo.event(delivery.event_seq);
    if (!event) {
      // The outbox row is gone (should not happen): close the delivery rather than block the queue.
      const now = this.now();
      repo.recordAttempt(
        { delivery_id: delivery.id, attempt: delivery.attempts + 1, started_at: now, duration_ms: 0, status_code: null, error: 'Event no longer exists', succeeded: false },
        { id: delivery.id, status: 'failed', next_attempt_at: null, last_attempt_at: now, last_status_code: null, last_error: 'Event no longer exists', completed_at: now },
      );
      return this.nextDue(webhookId);
    }
    return { webhook, delivery, event };
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

  /** Records an attempt's outcome: success, a retry at the next back-off step, or give-up; may disable the endpoint. */
  recordOutcome(job: DeliveryJob, result: SendResult, startedAtMs: number): void {
    const { repo, clock, settings } = this.deps;
    repo.relaxedTransaction(() => {
      const webhook = repo.get(job.webhook.id);
      const delivery = repo.delivery(job.delivery.id);
      if (!webhook || !delivery) return; // deleted meanwhile
      const nowMs = clock.now();
      const now = new Date(nowMs).toISOString();
      const succeeded = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
      const round = delivery.round_attempts + 1;
      let status: DeliveryStatus = 'pending';
      let next: string | null = null;
      if (succeeded) status = 'succeeded';
      else if (round > RETRY_STEPS.length) status = 'failed';
      else next = new Date(nowMs + this.retryDelay(round)).toISOString();
      repo.recordAttempt(
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
        if (webhook.failing_since !== null) repo.setFailingSince(webhook.id, null);
        return;
      }
      const since = webhook.failing_since ?? now;
      if (webhook.failing_since === null) repo.setFailingSince(webhook.id, now);
      if (webhook.active && nowMs - Date.parse(since) >= settings.disableAfterMs) {
        const disabled: WebhookRow = {
          ...webhook,
          failing_since: since,
          active: false,
          disabled_at: now,
          disabled_reason: `Every delivery since ${since} failed (last error: ${result.error ?? 'unknown'}). Fix the receiver and set active to true to resume; queued events are kept.`,
          updated_at: now,
        };
        repo.update(disabled);
        this.deps.outbox.record(webhook.org_id, 'webhook.disabled', this.toApi(disabled));
      }
    });
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

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
