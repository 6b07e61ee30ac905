/**
 * The webhooks feature's public face: what the composition root (app.ts) and other features may
 * use. Endpoints, per-endpoint delivery queues fanned out from the outbox, and the dispatcher
 * that sends them (docs/webhooks.md).
 */
import type { Registry } from 'prom-client';
import type { WebhookSettings } from '../../config.ts';
import type { Dialect, Store } from '../../db/store.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Outbox, SubscriptionCheck } from '../../platform/outbox.ts';
import type { SecretCipher } from '../../platform/secretCipher.ts';
import { createPrivateAddressList } from './address.ts';
import { WebhookDispatcher } from './dispatcher.ts';
import { registerWebhookMetrics } from './metrics.ts';
import { WebhooksRepo, sqliteSubscriptionCheck } from './repo.ts';
import { webhookRoutes } from './routes.ts';
import { WebhookSender } from './sender.ts';
import { WebhookService } from './service.ts';

export type { WebhookDispatcher } from './dispatcher.ts';
export type { WebhookService } from './service.ts';

/**
 * The check the outbox is given (platform/outbox.ts SubscriptionCheck), asked before recording an
 * event nobody could receive (WebhooksRepo.subscribes): json_each on SQLite, jsonb on PostgreSQL.
 */
export function subscriptionCheck(dialect: Dialect): SubscriptionCheck {
  const repo = new WebhooksRepo(dialect);
  return (db, orgId, type) => repo.subscribes(db, orgId, type);
}

/** The same check, synchronous on a SQLite connection of its own (the scan path's writer). */
export { sqliteSubscriptionCheck };

export interface WebhooksDeps {
  store: Store;
  outbox: Outbox;
  clock: Clock;
  settings: WebhookSettings;
  /** Sent as the User-Agent's version. */
  version: string;
  logger: { error(message: string, err?: unknown): void };
  /** Seals the signing secrets in the database (its key is in the secret store, never in the database). */
  cipher: SecretCipher;
  /** False while delivery is someone else's job (a paired site: the remote delivers). */
  enabled?: () => boolean;
  /**
   * True once this instance will never deliver its own events (a paired site: pairing is for
   * good, docs/sync.md). Its events are then pruned without waiting for the fan-out.
   */
  neverDelivers?: () => boolean;
}

/** The service (API and queues), its routes, the dispatcher (a worker) and its /metrics gauges. */
export function createWebhooks(deps: WebhooksDeps) {
  const privateList = createPrivateAddressList();
  const service = new WebhookService({
    store: deps.store,
    repo: new WebhooksRepo(deps.store.dialect, deps.cipher),
    outbox: deps.outbox,
    clock: deps.clock,
    settings: deps.settings,
    privateList,
  });
  const sender = new WebhookSender({
    timeoutMs: deps.settings.timeoutMs,
    publicOnly: deps.settings.publicOnly,
    privateList,
    userAgent: `Waymark-Webhooks/${deps.version}`,
  });
  const dispatcher = new WebhookDispatcher({
    service,
    sender,
    outbox: deps.outbox,
    clock: deps.clock,
    logger: deps.logger,
    ...(deps.enabled ? { enabled: deps.enabled } : {}),
  });
  // The fan-out is the outbox's consumer: an event goes once fanned out and no delivery refers to it.
  const neverDelivers = deps.neverDelivers ?? (() => false);
  const repo = new WebhooksRepo(deps.store.dialect);
  deps.outbox.addConsumer({
    readThrough: async (db) => (neverDelivers() ? Number.MAX_SAFE_INTEGER : repo.fanoutCursor(db)),
    stillNeeded: (db, seqs) => repo.referencedEvents(db, seqs),
  });
  return {
    service,
    dispatcher,
    routes: () => webhookRoutes(service),
    registerMetrics: (registry: Registry) => registerWebhookMetrics(registry, service),
  };
}
