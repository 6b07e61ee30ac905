import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshPostgresDatabase, openTestStore, type TestStore } from '../../../test/support/stores.ts';
import { needs } from '../../../test/support/system.ts';
import { fanOutSettled } from '../../../test/webhooks/helpers.ts';
import { defaultWebhookSettings } from '../../config.ts';
import { PostgresStore } from '../../db/postgresStore.ts';
import type { Store } from '../../db/store.ts';
import { ManualClock } from '../../platform/clock.ts';
import { Outbox } from '../../platform/outbox.ts';
import { OutboxPruner } from '../../platform/outboxPruner.ts';
import { InstanceKeys, WEBHOOK_DATA_KEY_SECRET } from '../../platform/instanceKeys.ts';
import { MemorySecretStore } from '../../platform/secrets.ts';
import { createWebhooks, subscriptionCheck } from './index.ts';

// The event outbox is pruned once the webhook fan-out (its consumer) is done with an event:
// fanned out, no delivery referring to it, older than the retention; never the newest event.

const DAY = 86_400_000;
const org = 'org-1';
const quiet = { error: () => {} };

const backends = [
  { dialect: 'sqlite' as const, skip: null },
  { dialect: 'postgres' as const, skip: needs.postgres() },
];

/** One "process": an outbox, the webhooks feature registered as its consumer, and a pruner. */
function instance(store: Store, clock: ManualClock, neverDelivers = false) {
  const outbox = new Outbox({ store, clock, subscribed: subscriptionCheck(store.dialect) });
  const webhooks = createWebhooks({ store, outbox, clock, settings: defaultWebhookSettings, version: 'test', logger: quiet, cipher: new InstanceKeys(new MemorySecretStore(), null).cipher(WEBHOOK_DATA_KEY_SECRET), neverDelivers: () => neverDelivers });
  const pruner = new OutboxPruner({ store, outbox, clock, logger: quiet, options: { retentionMs: 7 * DAY, chunk: 3 } });
  const record = (type: string, n: number) => store.transaction((tx) => outbox.record(tx, org, type, { n }));
  return { outbox, service: webhooks.service, pruner, record };
}

async function eventIds(store: Store): Promise<string[]> {
  return (await store.db.selectFrom('outbox_events').select(['id']).orderBy('seq').execute()).map((r) => r.id);
}

for (const { dialect, skip } of backends) {
  describe.skipIf(skip !== null)(`outbox pruning on ${dialect}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    let t: TestStore;
    let clock: ManualClock;

    beforeEach(async () => {
      t = await openTestStore(dialect);
      await t.store.db.insertInto('organizations').values({ id: org, name: org, created_at: new Date().toISOString() }).execute();
      clock = new ManualClock('2026-11-01T00:00:00.000Z');
    });
    afterEach(() => t.close());

    it('keeps events until the fan-out has read them and the retention has passed, and always the newest', async () => {
      const { service, pruner, record } = instance(t.store, clock);
      const hook = (await service.create(org, { url: 'http://127.0.0.1:1/a', events: ['node.created'] })).webhook;
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) ids.push(await record(i % 2 ? 'node.created' : 'node.updated', i));

      // Old enough, but not fanned out yet: nothing goes.
      clock.advance(8 * DAY);
      expect(await pruner.prune()).toBe(0);
      expect(await eventIds(t.store)).toEqual(ids);

      // Fanned out: the four node.created events have deliveries (pending: the receiver is down),
      // the four node.updated ones none. Those go, but the newest event stays.
      expect(await fanOutSettled(service)).toBe(8);
      expect(await pruner.prune()).toBe(4);
      expect(await eventIds(t.store)).toEqual([ids[1], ids[3], ids[5], ids[7]]);

      // Within the retention: a new event read by the fan-out and referred to by nobody stays.
      const fresh = await record('node.updated', 8);
      await fanOutSettled(service);
      expect(await pruner.prune()).toBe(0);
      expect((await eventIds(t.store)).at(-1)).toBe(fresh);

      // The deliveries end and are forgotten after the webhooks' retention: their events go then,
      // but the newest (now `fresh`, past the retention too) stays.
      await t.store.db.updateTable('webhook_deliveries').set({ status: 'failed', completed_at: new Date(clock.now()).toISOString() }).where('webhook_id', '=', hook.id).execute();
      clock.advance(defaultWebhookSettings.retentionMs + DAY);
      expect(await service.pruneFinished()).toBe(4);
      expect(await pruner.prune()).toBe(4);
      expect(await eventIds(t.store)).toEqual([fresh]);

      // Seqs go on from where they were (an endpoint created now starts after the newest event).
      const later = await record('node.created', 9);
      const seqs = await t.store.db.selectFrom('outbox_events').select(['id', 'seq']).orderBy('seq').execute();
      expect(seqs.map((r) => r.id)).toEqual([fresh, later]);
      expect(Number(seqs[1]!.seq)).toBeGreaterThan(9);
    });

    it('on a paired site, whose events the remote delivers, prunes them without a fan-out', async () => {
      const { pruner, record } = instance(t.store, clock, true);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(await record('node.created', i));
      expect(await pruner.prune()).toBe(0);
      clock.advance(8 * DAY);
      expect(await pruner.prune()).toBe(4);
      expect(await eventIds(t.store)).toEqual([ids[4]]);
    });
  });
}

describe.skipIf(needs.postgres() !== null)('outbox pruning by several processes on postgres', () => {
  const stores: PostgresStore[] = [];
  let drop: () => Promise<void> = async () => {};
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    await drop();
  });

  it('deletes each prunable event once while three processes prune at the same time, and nothing else', async () => {
    const database = await freshPostgresDatabase();
    drop = database.drop;
    for (let i = 0; i < 3; i++) stores.push(await PostgresStore.open(database.url, { poolSize: 3 }));
    await stores[0]!.db.insertInto('organizations').values({ id: org, name: org, created_at: new Date().toISOString() }).execute();
    const clock = new ManualClock('2026-11-01T00:00:00.000Z');
    const processes = stores.map((s) => instance(s, clock));
    const first = processes[0]!;
    await first.service.create(org, { url: 'http://127.0.0.1:1/a', events: ['node.created'] });
    const kept: string[] = [];
    for (let i = 0; i < 40; i++) {
      const id = await processes[i % 3]!.record(i % 4 === 0 ? 'node.created' : 'node.updated', i);
      if (i % 4 === 0) kept.push(id);
    }
    const newest = await first.record('node.updated', 40);
    await fanOutSettled(first.service);
    clock.advance(8 * DAY);
    // A pass that meets another process's lock leaves the work to it; repeat until none is left.
    let total = 0;
    for (let round = 0; round < 20; round++) {
      const counts = await Promise.all(processes.map((p) => p.pruner.prune()));
      total += counts.reduce((a, b) => a + b, 0);
      if ((await eventIds(stores[0]!)).length === kept.length + 1) break;
    }
    expect(total).toBe(30);
    expect(await eventIds(stores[0]!)).toEqual([...kept, newest]);
  });
});
