import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestStore, type TestStore } from '../../../test/support/stores.ts';
import { needs } from '../../../test/support/system.ts';
import { defaultWebhookSettings } from '../../config.ts';
import { ManualClock } from '../../platform/clock.ts';
import { Outbox } from '../../platform/outbox.ts';
import { createPrivateAddressList } from './address.ts';
import { WebhooksRepo } from './repo.ts';
import { InstanceKeys, WEBHOOK_DATA_KEY_SECRET } from '../../platform/instanceKeys.ts';
import { SecretUnreadableError } from '../../platform/secretCipher.ts';
import { MemorySecretStore } from '../../platform/secrets.ts';
import { subscriptionCheck } from './index.ts';
import { RETRY_STEPS, WebhookService } from './service.ts';
import { fanOutSettled } from '../../../test/webhooks/helpers.ts';

const backends = [
  { dialect: 'sqlite' as const, skip: null },
  { dialect: 'postgres' as const, skip: needs.postgres() },
];

for (const { dialect, skip } of backends) {
  describe.skipIf(skip !== null)(`WebhookService on ${dialect}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    let t: TestStore;
    let clock: ManualClock;
    let repo: WebhooksRepo;
    let random = 0.5;
    let service: WebhookService;
    const org = 'org-1';
    const otherOrg = 'org-2';

    let outbox: Outbox;
    let secrets: MemorySecretStore;

    beforeEach(async () => {
      t = await openTestStore(dialect);
      const now = new Date().toISOString();
      for (const id of [org, otherOrg]) await t.store.db.insertInto('organizations').values({ id, name: id, created_at: now }).execute();
      clock = new ManualClock(Date.now());
      secrets = new MemorySecretStore();
      repo = new WebhooksRepo(dialect, new InstanceKeys(secrets, null).cipher(WEBHOOK_DATA_KEY_SECRET));
      outbox = new Outbox({ store: t.store, clock, subscribed: subscriptionCheck(dialect) });
      service = new WebhookService({ store: t.store, repo, outbox, clock, settings: defaultWebhookSettings, privateList: createPrivateAddressList(), random: () => random });
    });
    afterEach(() => t.close());

    const record = (type: string, data: unknown, orgId = org) => t.store.transaction((tx) => outbox.record(tx, orgId, type, data));
    const queue = async (webhookId: string) => (await repo.listDeliveries(t.store.db, webhookId, { limit: 100, offset: 0 })).rows.reverse();

    it('fans each event out once per subscribed endpoint of its organization, from the endpoint creation on', async () => {
      await record('node.created', { n: 0 }); // before any endpoint: never delivered
      const a = (await service.create(org, { url: 'http://127.0.0.1:1/a', events: ['node.created', 'node.scanned'] })).webhook;
      const b = (await service.create(org, { url: 'http://127.0.0.1:1/b', events: ['batch.completed'], active: false })).webhook;
      const c = (await service.create(otherOrg, { url: 'http://127.0.0.1:1/c', events: ['node.created'] })).webhook;
      const e1 = await record('node.created', { n: 1 });
      const e2 = await record('batch.completed', { n: 2 });
      const e3 = await record('node.scanned', { n: 3 });
      const e4 = await record('node.created', { n: 4 }, otherOrg);
      expect(await fanOutSettled(service)).toBe(5);
      expect(await service.fanOut()).toBe(0);
      expect((await queue(a.id)).map((d) => d.event_id)).toEqual([e1, e3]);
      expect((await queue(b.id)).map((d) => d.event_id)).toEqual([e2]); // inactive endpoints still queue
      expect((await queue(c.id)).map((d) => d.event_id)).toEqual([e4]);

      // Even if the cursor were replayed, no event is queued twice for an endpoint.
      await t.store.db.updateTable('webhook_fanout_cursor').set({ last_seq: 0 }).execute();
      await fanOutSettled(service);
      expect(await queue(a.id)).toHaveLength(2);
      expect(await queue(b.id)).toHaveLength(1);
    });

    it('answers whether an endpoint of the organization, active or not, subscribes to an event type', async () => {
      expect(await repo.subscribes(t.store.db, org, 'node.scanned')).toBe(false);
      await service.create(org, { url: 'http://127.0.0.1:1/a', events: ['node.created', 'node.scanned'], active: false });
      expect(await repo.subscribes(t.store.db, org, 'node.scanned')).toBe(true);
      expect(await repo.subscribes(t.store.db, org, 'node.updated')).toBe(false);
      expect(await repo.subscribes(t.store.db, otherOrg, 'node.scanned')).toBe(false);
      // A type that is a substring of a subscribed one does not match.
      expect(await repo.subscribes(t.store.db, org, 'node')).toBe(false);
    });

    it('sends webhook.test only to its endpoint', async () => {
      const a = (await service.create(org, { url: 'http://127.0.0.1:1/a', events: ['node.created'] })).webhook;
      const b = (await service.create(org, { url: 'http://127.0.0.1:1/b', events: ['node.created'] })).webhook;
      const d = await service.sendTest(org, a.id);
      expect(d).toMatchObject({ webhook_id: a.id, event_type: 'webhook.test', status: 'pending' });
      expect(await queue(b.id)).toHaveLength(0);
    });

    it('backs off 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h with ±20 % jitter', () => {
      const base = defaultWebhookSettings.retryBaseMs;
      expect(RETRY_STEPS.map((s) => s * base)).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
      random = 0;
      expect(service.retryDelay(1)).toBe(4_000);
      expect(service.retryDelay(7)).toBe(28_800_000);
      random = 0.999999;
      expect(service.retryDelay(1)).toBe(6_000);
      expect(service.retryDelay(4)).toBe(Math.round(7_200_000 * (0.8 + 0.4 * 0.999999)));
      expect(service.retryDelay(4)).toBeLessThanOrEqual(8_640_000);
    });

    it('signs with the new and the old secret for 24 hours after a rotation, then with the new one only', async () => {
      const { webhook, secret: oldSecret } = await service.create(org, { url: 'http://127.0.0.1:1/a', events: ['node.created'] });
      await record('node.created', { hello: 'world' });
      await fanOutSettled(service);
      const { secret: newSecret } = await service.rotateSecret(org, webhook.id);
      const job = (await service.nextDue(webhook.id))!;
      const message = service.buildMessage(job);
      expect(message.headers['webhook-id']).toBe(job.event.id);
      expect(message.body).toBe(`{"type":"node.created","timestamp":"${job.event.created_at}","data":{"hello":"world"}}`);
      expect(message.headers['webhook-signature']!.split(' ')).toHaveLength(2);
      for (const s of [newSecret, oldSecret]) expect(new StandardWebhook(s).verify(message.body, message.headers)).toMatchObject({ type: 'node.created' });
      await service.releaseClaims();

      clock.advance(24 * 3_600_000 + 1);
      const later = service.buildMessage((await service.nextDue(webhook.id))!);
      expect(later.headers['webhook-signature']!.split(' ')).toHaveLength(1);
      expect(later.headers['webhook-id']).toBe(job.event.id);
      expect(later.body).toBe(message.body);
      expect(service.toApi(await service.get(org, webhook.id)).previous_secret_expires_at).toBeNull();
    });

    const storedSecrets = (id: string) => t.store.db.selectFrom('webhooks').select(['secret', 'previous_secret']).where('id', '=', id).executeTakeFirstOrThrow();

    it('keeps signing secrets sealed in the database, under a data key it made in the secret store at first use', async () => {
      expect(secrets.get(WEBHOOK_DATA_KEY_SECRET)).toBeNull();
      const { webhook, secret: oldSecret } = await service.create(org, { url: 'http://127.0.0.1:1/a', events: ['node.created'] });
      expect(secrets.get(WEBHOOK_DATA_KEY_SECRET)).toMatch(/^[0-9a-f]{64}$/);
      const { secret: newSecret } = await service.rotateSecret(org, webhook.id);
      const stored = await storedSecrets(webhook.id);
      for (const [value, clear] of [[stored.secret, newSecret], [stored.previous_secret!, oldSecret]] as const) {
        expect(value).toMatch(/^enc1:/);
        expect(value).not.toContain(clear);
        expect(value).not.toContain(clear.replace(/^whsec_/, ''));
      }
      // Sealed again, the same secret looks different (a nonce per value); an unchanged secret is not rewritten.
      const again = await service.create(org, { url: 'http://127.0.0.1:1/b', events: ['node.created'] });
      expect((await storedSecrets(again.webhook.id)).secret).not.toBe(stored.secret);
      await service.update(org, webhook.id, { description: 'edited' });
      expect(await storedSecrets(webhook.id)).toEqual(stored);
      // The row id is the associated data: a sealed secret copied onto another endpoint does not open there.
      await t.store.db.updateTable('webhooks').set({ secret: stored.secret }).where('id', '=', again.webhook.id).execute();
      await expect(service.get(org, again.webhook.id)).rejects.toThrow(SecretUnreadableError);
      // Another data key (a replaced secret store) does not open them either.
      const stranger = new WebhooksRepo(dialect, new InstanceKeys(new MemorySecretStore(), null).cipher(WEBHOOK_DATA_KEY_SECRET));
      await expect(stranger.get(t.store.db, webhook.id)).rejects.toThrow(SecretUnreadableError);
    });

    it('seals secrets stored in clear before sealing existed, once, whatever was already sealed, and they sign as before', async () => {
      const rotated = await service.create(org, { url: 'http://127.0.0.1:1/a', events: ['node.created'] });
      const { secret: current } = await service.rotateSecret(org, rotated.webhook.id);
      const plain = await service.create(org, { url: 'http://127.0.0.1:1/b', events: ['node.created'] });
      // As an older version left them: both secrets of one endpoint in clear, one of another's.
      await t.store.db.updateTable('webhooks').set({ secret: current, previous_secret: rotated.secret }).where('id', '=', rotated.webhook.id).execute();
      await t.store.db.updateTable('webhooks').set({ secret: plain.secret }).where('id', '=', plain.webhook.id).execute();
      const sealedOne = await service.create(org, { url: 'http://127.0.0.1:1/c', events: ['node.created'] });
      const untouched = await storedSecrets(sealedOne.webhook.id);

      expect(await service.sealStoredSecrets()).toBe(2);
      const first = await storedSecrets(rotated.webhook.id);
      expect(first.secret).toMatch(/^enc1:/);
      expect(first.previous_secret).toMatch(/^enc1:/);
      expect((await storedSecrets(plain.webhook.id)).secret).toMatch(/^enc1:/);
      expect(await storedSecrets(sealedOne.webhook.id)).toEqual(untouched);
      // A second start finds nothing left to seal and rewrites nothing.
      expect(await service.sealStoredSecrets()).toBe(0);
      expect(await storedSecrets(rotated.webhook.id)).toEqual(first);

      await record('node.created', { hello: 'sealed' });
      await fanOutSettled(service);
      const message = service.buildMessage((await service.nextDue(rotated.webhook.id))!);
      expect(message.headers['webhook-signature']!.split(' ')).toHaveLength(2);
      for (const s of [current, rotated.secret]) expect(new StandardWebhook(s).verify(message.body, message.headers)).toMatchObject({ data: { hello: 'sealed' } });
    });

    it("treats another organization's endpoint as not found", async () => {
      const a = (await service.create(org, { url: 'http://127.0.0.1:1/a', events: ['node.created'] })).webhook;
      await expect(service.get(otherOrg, a.id)).rejects.toThrow('Webhook not found');
      await expect(service.rotateSecret(otherOrg, a.id)).rejects.toThrow('Webhook not found');
      await expect(service.listDeliveries(otherOrg, a.id, { limit: 10, offset: 0 })).rejects.toThrow('Webhook not found');
    });
  });
}
