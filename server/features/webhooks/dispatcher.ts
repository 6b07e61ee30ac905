import { AsyncResource } from 'node:async_hooks';
import type { Clock } from '../../platform/clock.ts';
import type { Outbox } from '../../platform/outbox.ts';
import type { WebhookSender } from './sender.ts';
import type { WebhookService } from './service.ts';

export interface DispatcherLogger {
  error(message: string, err?: unknown): void;
}


/** Longest sleep between looks at the queue (guards against clock jumps). */
const MAX_SLEEP_MS = 60_000;
/** After an unexpected error in an endpoint's loop (e.g. the database is busy), wait this long. */
const ERROR_PAUSE_MS = 5_000;
/** How soon to fan out again while recorded events wait for earlier transactions (PostgreSQL). */
const UNSETTLED_RETRY_MS = 100;
/** How often (by the injected clock) finished deliveries past their retention are deleted. */
const PRUNE_EVERY_MS = 60 * 60 * 1000;

/**
 * Background worker that delivers webhooks. It wakes when an event is recorded
 * (outbox.onRecorded) or a queue changes, fans new outbox events out into deliveries, and runs
 * one sender loop per endpoint that has a due delivery: endpoints are independent (a slow or
 * dead receiver holds back only its own queue), while each endpoint gets its deliveries strictly
 * in order (its queue head is retried until it succeeds or gives up). One timer sleeps until the
 * earliest scheduled retry; the injected clock decides what is due.
 *
 * Several processes on one PostgreSQL database each run one: an endpoint whose sender claim
 * another process holds is left to it, and looked at again when that claim expires (a process
 * that died mid-attempt), see WebhookService. Events recorded by another process wake only that
 * process; this one still looks at the queues at least every MAX_SLEEP_MS.
 */
export class WebhookDispatcher {
  private stopped = true;
  private tickQueued = false;
  /** A tick is under way; `tickAgain` asks for another one when it ends (ticks never overlap). */
  private ticking = false;
  private tickAgain = false;
  /** The latest tick (stop waits for it). */
  private ticked: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private readonly running = new Map<string, Promise<void>>();
  private readonly inFlight = new Set<AbortController>();
  /** Endpoints whose loop failed unexpectedly: not restarted before this (wall-clock) time. */
  private readonly pausedUntil = new Map<string, number>();
  private unsubscribe: Array<() => void> = [];
  private lastPrune = -Infinity;

  private readonly service: WebhookService;
  private readonly sender: WebhookSender;
  private readonly outbox: Outbox;
  private readonly clock: Clock;
  private readonly logger: DispatcherLogger;

  /** False while this instance is a paired sync site: the remote delivers its events (docs/sync.md). */
  private readonly enabled: () => boolean;

  constructor(deps: {
    service: WebhookService;
    sender: WebhookSender;
    outbox: Outbox;
    clock: Clock;
    logger: DispatcherLogger;
    enabled?: () => boolean;
  }) {
    this.enabled = deps.enabled ?? (() => true);
    this.service = deps.service;
    this.sender = deps.sender;
    this.outbox = deps.outbox;
    this.clock = deps.clock;
    this.logger = deps.logger;
  }

  /**
   * Runs a tick in the async context of start(), not in the waker's: a wake from inside a
   * transaction's callback (store.ts) must not make the tick's own queries part of it.
   */
  private tickOutside: () => void = () => {};

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.tickOutside = AsyncResource.bind(() => void this.tick());
    this.unsubscribe = [this.outbox.onRecorded(() => this.wake()), this.service.onQueueChanged(() => this.wake())];
    this.wake();
  }

  /** Look at the queues soon (coalesced: a burst of events causes one look). */
  wake(): void {
    if (this.stopped || this.tickQueued) return;
    this.tickQueued = true;
    setImmediate(() => {
      this.tickQueued = false;
      this.tickOutside();
    });
  }

  /**
   * Resolves once the dispatcher has nothing left to do now: no look at the queues pending and
   * no endpoint sending. What is due has then been sent, so "nothing was sent" is a fact, not a
   * guess after a sleep (tests, shutdown checks).
   */
  async idle(): Promise<void> {
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve)); // after a tick that wake() queued
      if (this.running.size === 0 && !this.tickQueued) return;
      await Promise.all([...this.running.values()]);
    }
  }

  /** Stops: aborts requests in flight (their deliveries stay pending, same webhook-id next time). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe.forEach((u) => u());
    this.unsubscribe = [];
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.inFlight.forEach((c) => c.abort());
    await this.ticked;
    await Promise.all([...this.running.values()]);
    this.sender.close();
    // Aborted attempts were not made: another process may take their endpoints at once.
    await this.service.releaseClaims().catch((err: unknown) => this.logger.error('webhooks: releasing claims failed', err));
  }

  private async tick(): Promise<void> {
    if (this.ticking) {
      this.tickAgain = true;
      return;
    }
    this.ticking = true;
    const done = this.look().finally(() => {
      this.ticking = false;
      if (this.tickAgain) {
        this.tickAgain = false;
        this.wake();
      }
    });
    this.ticked = done;
    await done;
  }

  private async look(): Promise<void> {
    if (this.stopped || !this.enabled()) return;
    try {
      await this.service.fanOut();
      const now = this.clock.now();
      if (now - this.lastPrune >= PRUNE_EVERY_MS) {
        const limit = 2000;
        if ((await this.service.pruneFinished(limit)) < limit) this.lastPrune = now;
        else this.wake(); // more to delete: continue on the next turn of the event loop
      }
      // Events that other transactions may still precede: fan out again shortly.
      let earliest = this.service.fanOutBehind() ? now + UNSETTLED_RETRY_MS : Infinity;
      for (const head of await this.service.queueHeads()) {
        if (this.running.has(head.webhook_id)) continue;
        if (this.service.claimedElsewhere(head, now)) {
          // Another process is sending it; look again when its claim runs out.
          earliest = Math.min(earliest, Date.parse(head.claimed_until!));
          continue;
        }
        const pause = this.pausedUntil.get(head.webhook_id);
        if (pause !== undefined) {
          const left = pause - Date.now();
          if (left > 0) {
            earliest = Math.min(earliest, now + left);
            continue;
          }
          this.pausedUntil.delete(head.webhook_id);
        }
        const due = head.next_attempt_at === null ? now : Date.parse(head.next_attempt_at);
        if (due <= now) this.run(head.webhook_id);
        else earliest = Math.min(earliest, due);
      }
      this.sleepUntil(earliest, now);
    } catch (err) {
      this.logger.error('webhooks: dispatch failed', err);
      this.sleepUntil(this.clock.now() + 1000, this.clock.now());
    }
  }

  private sleepUntil(at: number, now: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    // Nothing scheduled: still look again within MAX_SLEEP_MS (events written by another
    // connection without a notification, retention pruning).
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.wake();
    }, Math.min(Math.max(at - now, 0), MAX_SLEEP_MS));
  }

  /** One endpoint's sender loop: sends its due queue head, records the outcome, repeats. */
  private run(webhookId: string): void {
    const loop = async () => {
      while (!this.stopped) {
        const job = await this.service.nextDue(webhookId);
        if (!job) return;
        const message = this.service.buildMessage(job);
        const controller = new AbortController();
        this.inFlight.add(controller);
        const startedAt = this.clock.now();
        let result;
        try {
          result = await this.sender.send(message, controller.signal);
        } finally {
          this.inFlight.delete(controller);
        }
        if (result.aborted) return;
        await this.service.recordOutcome(job, result, startedAt);
      }
    };
    const promise = loop()
      .catch((err: unknown) => {
        this.logger.error(`webhooks: delivery loop for ${webhookId} failed; pausing it for ${ERROR_PAUSE_MS / 1000} s`, err);
        this.pausedUntil.set(webhookId, Date.now() + ERROR_PAUSE_MS);
      })
      .finally(() => {
        this.running.delete(webhookId);
        this.wake();
      });
    this.running.set(webhookId, promise);
  }
}
