import type { Executor, Store } from '../db/store.ts';
import type { Clock } from './clock.ts';
import { newId } from './ids.ts';
import { OutboxRepo } from './outboxRepo.ts';

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
 * The webhooks feature answers it (it owns the endpoints table).
 */
export type SubscriptionCheck = (db: Executor, orgId: string, type: string) => Promise<boolean>;

/**
 * A reader of the outbox (the webhook fan-out). The pruner (outboxPruner.ts) deletes an event only
 * once every consumer is done with it: read for good, and no longer referred to.
 */
export interface OutboxConsumer {
  /** The highest seq this consumer has read for good; events after it are still to come to it. */
  readThrough(db: Executor): Promise<number>;
  /** Of these seqs (all read for good), the ones it still refers to (e.g. a delivery not yet forgotten). */
  stillNeeded(db: Executor, seqs: readonly number[]): Promise<Set<number>>;
}

export interface OutboxDeps {
  store: Store;
  clock: Clock;
  subscribed: SubscriptionCheck;
  repo?: OutboxRepo;
}

/** The webhook-id of a new event. */
function eventId(): string {
  return `evt_${newId().replaceAll('-', '')}`;
}

/**
 * The durable event outbox. Record an event inside the transaction that makes the change, so the
 * event exists if and only if the change committed. The id is the webhook-id.
 */
export class Outbox {
  private readonly listeners = new Set<() => void>();
  /** Transactions whose commit already tells the listeners (once per transaction is enough). */
  private readonly pending = new WeakSet<Executor>();
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly repo: OutboxRepo;
  private readonly check: SubscriptionCheck;
  private readonly readers: OutboxConsumer[] = [];

  constructor(deps: OutboxDeps) {
    this.store = deps.store;
    this.clock = deps.clock;
    this.check = deps.subscribed;
    this.repo = deps.repo ?? new OutboxRepo();
  }

  async record(tx: Executor, orgId: string, type: string, data: unknown): Promise<string> {
    const id = eventId();
    await this.repo.insert(tx, { id, org_id: orgId, type, data_json: JSON.stringify(data), created_at: new Date(this.clock.now()).toISOString() });
    this.notifyAfterCommit(tx);
    return id;
  }

  /** Events in this order, as record() one after another would, in fewer statements (the node import). */
  async recordMany(tx: Executor, orgId: string, events: ReadonlyArray<{ type: string; data: unknown }>): Promise<string[]> {
    if (events.length === 0) return [];
    const createdAt = new Date(this.clock.now()).toISOString();
    const rows = events.map((e) => ({ id: eventId(), org_id: orgId, type: e.type, data_json: JSON.stringify(e.data), created_at: createdAt }));
    await this.repo.insertMany(tx, rows);
    this.notifyAfterCommit(tx);
    return rows.map((r) => r.id);
  }

  private notifyAfterCommit(tx: Executor): void {
    // Listeners (e.g. the webhook dispatcher) look for new events only once the row is visible.
    if (!this.pending.has(tx)) {
      this.pending.add(tx);
      this.store.afterCommit(tx, () => {
        this.pending.delete(tx);
        this.notifyRecorded();
      });
    }
  }

  /** See SubscriptionCheck. */
  subscribed(db: Executor, orgId: string, type: string): Promise<boolean> {
    return this.check(db, orgId, type);
  }

  /**
   * Tells the listeners that events were written to outbox_events without record(): the scan
   * writer inserts `node.scanned` rows itself (time-ordered ids, batched).
   */
  notifyRecorded(): void {
    if (this.listeners.size > 0) queueMicrotask(() => this.listeners.forEach((l) => l()));
  }

  /** Called (asynchronously) whenever events were committed: wake-up for delivery workers. */
  onRecorded(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Registers a reader whose progress and references hold events back from pruning. */
  addConsumer(consumer: OutboxConsumer): void {
    this.readers.push(consumer);
  }

  /** The registered readers (outboxPruner.ts). */
  consumers(): readonly OutboxConsumer[] {
    return this.readers;
  }

  /** Events after `afterSeq`, oldest first. */
  async readAfter(db: Executor, afterSeq: number, limit = 500): Promise<OutboxEvent[]> {
    const rows = await this.repo.after(db, afterSeq, limit);
    return rows.map(({ data_json, ...row }) => ({ ...row, data: JSON.parse(data_json) as unknown }));
  }
}
