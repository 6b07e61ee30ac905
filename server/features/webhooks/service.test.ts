import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDataDir } from '../../../test/support/server.ts';
import { defaultWebhookSettings } from '../../config.ts';
import { type Database, openDatabase } from '../../db/database.ts';
import { ManualClock } from '../../platform/clock.ts';
import { LegacyOutbox } from '../../platform/legacyOutbox.ts';
import { createPrivateAddressList } from './address.ts';
import { WebhooksRepo } from './repo.ts';
import { RETRY_STEPS, WebhookService } from './service.ts';

describe('WebhookService (real SQLite file)', () => {
  let dir: string;
  let db: Database;
  let clock: ManualClock;
  let outbox: LegacyOutbox;
  let repo: WebhooksRepo;
  let random = 0.5;
  let service: WebhookService;
  const org = 'org-1';
  const otherOrg = 'org-2';

  beforeEach(() => {
    dir = tempDataDir('waymark-webhook-unit-');
    db = openDatabase(join(dir, 'db.sqlite'));
    const now = new Date().toISOString();
    for (const id of [org, otherOrg]) db.prepare('INSERT INTO organizations (id, name, created_at) VALUES (?, ?, ?)').run(id, id, now);
    clock = new ManualClock(Date.now());
    outbox = new LegacyOutbox(db, clock);
    repo = new WebhooksRepo(db);
    service = new WebhookService({ repo, outbox, clock, settings: defaultWebhookSettings, privateList: createPrivateAddressList(), random: () => random });
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const record = (type: string, data: unknown, orgId = org) => db.transaction(() => outbox.record(orgId, type, data))();
  const queue = (webhookId: string) => repo.listDeliveries(webhookId, { limit: 100, offset: 0 }).rows.reverse();

  it('fans each event out once per subscribed endpoint of its organization, from the endpoint creation on', () => {
    record('node.created', { n: 0 }); // before any endpoint: never delivered
    const a = service.create(org, { url: 'http://127.0.0.1:1/a', events: ['node.created', 'node.scanned'] }).webhook;
    const b = service.create(org, { url: 'http://127.0.0.1:1/b', events: ['batch.completed'], active: false }).webhook;
    const c = service.create(otherOrg, { url: 'http://127.0.0.1:1/c', events: ['node.created'] }).webhook;
    const e1 = record('node.created', { n: 1 });
    const e2 = record('batch.completed', { n: 2 });
    const e3 = record('node.scanned', { n: 3 });
    const e4 = record('node.created', { n: 4 }, otherOrg);
    expect(service.fanOut()).toBe(5);
    expect(service.fanOut()).toBe(0);
    expect(queue(a.id).map((d) => d.event_id)).toEqual([e1, e3]);
    expect(queue(b.id).map((d) => d.event_id)).toEqual([e2]); // inactive endpoints still queue
    expect(queue(c.id).map((d) => d.event_id)).toEqual([e4]);

    // Even if the cursor were replayed, no event is queued twice for an endpoint.
    db.prepare('UPDATE webhook_fanout_cursor SET last_seq = 0').run();
    service.fanOut();
    expect(queue(a.id)).toHaveLength(2);
    expect(queue(b.id)).toHaveLength(1);
  });

  it('sends webhook.test only to its endpoint', () => {
    const a = service.create(org, { url: 'http://127.0.0.1:1/a', events: ['node.created'] }).webhook;
    const b = service.create(org, { url: 'http://127.0.0.1:1/b', events: ['node.created'] }).webhook;
    const d = service.sendTest(org, a.id);
    expect(d).toMatchObject({ webhook_id: a.id, event_type: 'webhook.test', status: 'pending' });
    expect(queue(b.id)).toHaveLength(0);
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

  it('signs with the new and the old secret for 24 hours after a rotation, then with the new one only', () => {
    const { webhook, secret: oldSecret } = service.create(org, { url: 'http://127.0.0.1:1/a', events: ['node.created'] });
    record('node.created', { hello: 'world' });
    service.fanOut();
    const { secret: newSecret } = service.rotateSecret(org, webhook.id);
    const job = service.nextDue(webhook.id)!;
    const message = service.buildMessage(job);
    expect(message.headers['webhook-id']).toBe(job.event.id);
    expect(message.body).toBe(`{"type":"node.created","timestamp":"${job.event.created_at}","data":{"hello":"world"}}`);
    expect(message.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const s of [newSecret, oldSecret]) expect(new StandardWebhook(s).verify(message.body, message.headers)).toMatchObject({ type: 'node.created' });

    clock.advance(24 * 3_600_000 + 1);
    const later = service.buildMessage(service.nextDue(webhook.id)!);
    expect(later.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(later.headers['webhook-id']).toBe(job.event.id);
    expect(later.body).toBe(message.body);
    expect(service.toApi(service.get(org, webhook.id)).previous_secret_expires_at).toBeNull();
  });

  it("treats another organization's endpoint as not found", () => {
    const a = service.create(org, { url: 'http://127.0.0.1:1/a', events: ['node.created'] }).webhook;
    expect(() => service.get(otherOrg, a.id)).toThrow('Webhook not found');
    expect(() => service.rotateSecret(otherOrg, a.id)).toThrow('Webhook not found');
    expect(() => service.listDeliveries(otherOrg, a.id, { limit: 10, offset: 0 })).toThrow('Webhook not found');
  });
});
