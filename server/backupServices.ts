/**
 * The services `waymark export --org` and `waymark import --org` run on (features/backup): the
 * features that own an organization's entities, wired on an opened store without the HTTP
 * front, the workers or sync.
 */
import { defaultWebhookSettings, VERSION } from './config.ts';
import type { Store } from './db/store.ts';
import type { BackupServices } from './features/backup/index.ts';
import { createWebhooks, subscriptionCheck } from './features/webhooks/index.ts';
import { createNodeServices } from './nodeServices.ts';
import type { Clock } from './platform/clock.ts';
import { Outbox } from './platform/outbox.ts';

export function createBackupServices(store: Store, clock: Clock, scanBase: string): BackupServices {
  const outbox = new Outbox({ store, clock, subscribed: subscriptionCheck(store.dialect) });
  const { nodes, rules, templates, batches } = createNodeServices({ store, clock, outbox, scanBase, apiBase: `${scanBase.replace(/\/+$/, '')}/v1` });
  const webhooks = createWebhooks({ store, outbox, clock, settings: defaultWebhookSettings, version: VERSION, logger: console }).service;
  return { nodes, rules, templates, batches, webhooks };
}
