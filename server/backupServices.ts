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
import { InstanceKeys, rootKeyOf, WEBHOOK_DATA_KEY_SECRET } from './platform/instanceKeys.ts';
import { Outbox } from './platform/outbox.ts';
import type { SecretStore } from './platform/secrets.ts';

/** `secrets`: the store the servers of this data use (`--secrets`, or `<data>/secrets.json`): webhooks are sealed under its data key. */
export function createBackupServices(store: Store, clock: Clock, scanBase: string, secrets: SecretStore): BackupServices {
  const outbox = new Outbox({ store, clock, subscribed: subscriptionCheck(store.dialect) });
  const { nodes, rules, templates, batches } = createNodeServices({ store, clock, outbox, scanBase, apiBase: `${scanBase.replace(/\/+$/, '')}/v1` });
  const cipher = new InstanceKeys(secrets, rootKeyOf(secrets)).cipher(WEBHOOK_DATA_KEY_SECRET);
  const webhooks = createWebhooks({ store, outbox, clock, settings: defaultWebhookSettings, version: VERSION, logger: console, cipher }).service;
  return { nodes, rules, templates, batches, webhooks };
}
