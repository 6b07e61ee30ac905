import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { freshPostgresDatabase, openTestStore } from '../../../test/support/stores.ts';
import { needs } from '../../../test/support/system.ts';
import { defaultWebhookSettings } from '../../config.ts';
import { PostgresStore } from '../../db/postgresStore.ts';
import type { Executor, Store } from '../../db/store.ts';
import { ManualClock } from '../../platform/clock.ts';
import { Outbox } from '../../platform/outbox.ts';
import { InstanceKeys, WEBHOOK_DATA_KEY_SECRET } from '../../platform/instanceKeys.ts';
import { MemorySecretStore } from '../../platform/secrets.ts';
import { createPrivateAddressList } from './address.ts';
import { WebhooksRepo } from './repo.ts';
import type { SendResult } from './sender.ts';
import { subscriptionCheck } from './index.ts';
import { WebhookService } from './service.ts';
import { fanOutSettled } from '../../../test/webhooks/helpers.ts';

const pgSkip = needs.postgres();

// Several processes on one PostgreSQL database, each with its own connection pool and service:
// fan-out once and without gaps, one sender per endpoint at a time, claims that expire.

const org = 'org-1';
const ok: SendResult = { statusCode: 204, error: null, durationMs: 1, aborted: false };
const down: SendResult = { statusCode: 503, error: 'HTTP 503', durationMs: 1, aborted: false };

const outboxes = new WeakMap<Store, Outbox>();

/** The store's outbox (one per "process", as createApp makes one). */
function outboxOf(store: Store, clock: ManualClock = new ManualClock(Date.now())): Outbox {
  let outbox = outboxes.get(store);
  if (!outbox) {
    outbox = new Outbox({ store, clock, subscribed: subscriptionCheck(store.dialect) });
    outboxes.set(store, outbox);
  }
  return outbox;
}

/** Records an event in the caller's transaction, as a feature does. */
function appendEvent(store: Store, tx: Executor, type: string, data: unknown): Promise<string> {
  return outboxOf(store).record(tx, org, type, data);
}

/** The operator's root key every "process" is given: each derives the same data key from it. */
const rootKey = randomBytes(32);

function service(store: Store, clock: ManualClock): WebhookService {
  return new WebhookService({
    store,
    repo: new WebhooksRepo(store.dialect, new InstanceKeys(new MemorySecretStore(), rootKey).cipher(WEBHOOK_DATA_KEY_SECRET)),
    outbox: outboxOf(store, clock),
    clock,
    settings: { ...defaultWebhookSettings, timeoutMs: 1000 },
    privateList: createPrivateAddressList(),
  });
}

describe.skipIf(pgSkip !== null)(`webhooks shared by processes on postgres${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  const stores: PostgresStore[] = [];
  let drop: () => Promise<void> = async () => {};
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
    await drop();
  });

  /** `n` "processes": a pool and a service each, on one fresh database with one organization. */
  async function processes(n: number, clock: ManualClock): Promise<Array<{ store: PostgresStore; webhooks: WebhookService }>> {
    const database = await freshPostgresDatabase();
    drop = database.drop;
    for (let i = 0; i < n; i++) stores.push(await PostgresStore.open(database.url, { poolSize: 3 }));
    await stores[0]!.db.insertInto('organizations').values({ id: org, name: 'Org', created_at: new Date().toISOString() }).execute();
    return stores.map((store) => ({ store, webhooks: service(store, clock) }));
  }

  const queue = (store: Store, webhookId: string) =>
    new WebhooksRepo('postgres').listDeliveries(store.db, webhookId, { limit: 1000, offset: 0 }).then((r) => r.rows.reverse());

  it('fans out an event that commits after one with a higher seq, instead of skipping it', async () => {
    const clock = new ManualClock(Date.now());
    const [a] = await processes(1, clock);
    const { store, webhooks } = a!;
    const hook = (await webhooks.create(org, { url: 'http://127.0.0.1:1/a', events: ['node.created'] })).webhook;

    // A transaction draws seq n for its event and stays open; a later one draws n+1 and commits.
    let commitSlow!: () => void;
    let slowInserted!: () => void;
    const inserted = new Promise<void>((resolve) => (slowInserted = resolve));
    const slow = store.transaction(async (tx) => {
      const id = await appendEvent(store, tx, 'node.created', { n: 'slow' });
      slowInserted();
      await new Promise<void>((resolve) => (commitSlow = resolve));
      return id;
    });
    await inserted;
    const fast = await store.transaction((tx) => appendEvent(store, tx, 'node.created', { n: 'fast' }));

    // The fan-out does not move its cursor past the open transaction's event: it leaves both.
    try {
      expect(await webhooks.fanOut()).toBe(0);
      expect(webhooks.fanOutBehind()).toBe(true);
      expect(await queue(store, hook.id)).toEqual([]);
    } finally {
      commitSlow();
    }
    const slowId = await slow;
    // Once it has ended, both go out, in seq order.
    expect(await fanOutSettled(webhooks)).toBe(2);
    expect(webhooks.fanOutBehind()).toBe(false);
    expect((await queue(store, hook.id)).map((d) => d.event_id)).toEqual([slowId, fast]);
  });

  it('queues each event exactly once per endpoint when three processes fan out at once', async () => {
    const clock = new ManualClock(Date.now());
    const procs = await processes(3, clock);
    const hook = (await procs[0]!.webhooks.create(org, { url: 'http://127.0.0.1:1/a', events: ['node.created'] })).webhook;
    const ids: string[] = [];
    // Events written by all three while all three fan out.
    await Promise.all(
      procs.map(async ({ store, webhooks }, p) => {
        for (let i = 0; i < 20; i++) {
          ids.push(await store.transaction((tx) => appendEvent(store, tx, 'node.created', { p, i })));
          await webhooks.fanOut();
        }
      }),
    );
    await fanOutSettled(procs[0]!.webhooks);
    const queued = await queue(procs[0]!.store, hook.id);
    expect(queued).toHaveLength(60);
    expect(new Set(queued.map((d) => d.event_id))).toEqual(new Set(ids));
    // In outbox order.
    const seqs = queued.map((d) => d.event_seq);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
  });

  it('lets one process at a time send an endpoint, in order, and hands it over once its queue is empty', async () => {
    const clock = new ManualClock(Date.now());
    const [a, b, c] = await processes(3, clock);
    const hook = (await a!.webhooks.create(org, { url: 'http://127.0.0.1:1/a', events: ['node.created'] })).webhook;
    const first = await a!.store.transaction((tx) => appendEvent(a!.store, tx, 'node.created', { n: 1 }));
    const second = await a!.store.transaction((tx) => appendEvent(a!.store, tx, 'node.created', { n: 2 }));
    await fanOutSettled(a!.webhooks);

    // All three look at the due head at once: one gets it.
    const jobs = await Promise.all([a, b, c].map((p) => p!.webhooks.nextDue(hook.id)));
    const holders = jobs.flatMap((job, i) => (job ? [i] : []));
    expect(holders).toHaveLength(1);
    const holder = [a, b, c][holders[0]!]!;
    const others = [a, b, c].filter((p) => p !== holder).map((p) => p!);
    const job = jobs[holders[0]!]!;
    expect(job.event.id).toBe(first);
    // While it sends, nobody else takes the endpoint, not even for the next delivery …
    for (const p of others) expect(await p.webhooks.nextDue(hook.id)).toBeUndefined();
    expect(await holder.webhooks.recordOutcome(job, ok, clock.now())).toBe(true);
    for (const p of others) expect(await p.webhooks.nextDue(hook.id)).toBeUndefined();
    // … the holder goes on with it, and gives the endpoint up when nothing is due.
    const next = await holder.webhooks.nextDue(hook.id);
    expect(next?.event.id).toBe(second);
    expect(await holder.webhooks.recordOutcome(next!, ok, clock.now())).toBe(true);
    expect(await holder.webhooks.nextDue(hook.id)).toBeUndefined();

    const third = await others[0]!.store.transaction((tx) => appendEvent(others[0]!.store, tx, 'node.created', { n: 3 }));
    await fanOutSettled(others[0]!.webhooks);
    const taken = await others[0]!.webhooks.nextDue(hook.id);
    expect(taken?.event.id).toBe(third);
    expect(await holder.webhooks.nextDue(hook.id)).toBeUndefined();
    expect(await others[0]!.webhooks.recordOutcome(taken!, ok, clock.now())).toBe(true);
    expect((await queue(a!.store, hook.id)).map((d) => [d.event_id, d.status, d.attempts])).toEqual([
      [first, 'succeeded', 1],
      [second, 'succeeded', 1],
      [third, 'succeeded', 1],
    ]);
  });

  it('retries the attempt of a process that died, under the same event id, once its claim expires', async () => {
    const clock = new ManualClock(Date.now());
    const [a, b] = await processes(2, clock);
    const hook = (await a!.webhooks.create(org, { url: 'http://127.0.0.1:1/a', events: ['node.created'] })).webhook;
    const event = await a!.store.transaction((tx) => appendEvent(a!.store, tx, 'node.created', { n: 1 }));
    await fanOutSettled(a!.webhooks);

    const lost = await a!.webhooks.nextDue(hook.id); // a sends … and dies before recording
    expect(lost?.event.id).toBe(event);
    clock.advance(a!.webhooks.claimMs - 1);
    expect(await b!.webhooks.nextDue(hook.id)).toBeUndefined();
    const [head] = await b!.webhooks.queueHeads();
    expect(b!.webhooks.claimedElsewhere(head!, clock.now())).toBe(true);

    clock.advance(1);
    expect(b!.webhooks.claimedElsewhere(head!, clock.now())).toBe(false);
    const retry = await b!.webhooks.nextDue(hook.id);
    expect(retry?.event.id).toBe(event);
    expect(retry?.delivery.id).toBe(lost!.delivery.id);
    const message = b!.webhooks.buildMessage(retry!);
    expect(message.headers['webhook-id']).toBe(event);

    // Had a only been slow: its late outcome is not the one of record.
    expect(await a!.webhooks.recordOutcome(lost!, ok, clock.now())).toBe(false);
    expect(await b!.webhooks.recordOutcome(retry!, down, clock.now())).toBe(true);
    const [delivery] = await queue(a!.store, hook.id);
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 503 });
  });

  it('gives its claims up when it stops, so another process need not wait for them to expire', async () => {
    const clock = new ManualClock(Date.now());
    const [a, b] = await processes(2, clock);
    const hook = (await a!.webhooks.create(org, { url: 'http://127.0.0.1:1/a', events: ['node.created'] })).webhook;
    await a!.store.transaction((tx) => appendEvent(a!.store, tx, 'node.created', { n: 1 }));
    await fanOutSettled(a!.webhooks);
    expect(await a!.webhooks.nextDue(hook.id)).toBeDefined();
    expect(await b!.webhooks.nextDue(hook.id)).toBeUndefined();
    await a!.webhooks.releaseClaims();
    expect(await b!.webhooks.nextDue(hook.id)).toBeDefined();
  });
});

describe('webhooks on sqlite: one process, no claims', () => {
  it('hands the due head to every look, as one process has one loop per endpoint', async () => {
    const t = await openTestStore('sqlite');
    try {
      const clock = new ManualClock(Date.now());
      await t.store.db.insertInto('organizations').values({ id: org, name: 'Org', created_at: new Date().toISOString() }).execute();
      const webhooks = service(t.store, clock);
      const hook = (await webhooks.create(org, { url: 'http://127.0.0.1:1/a', events: ['node.created'] })).webhook;
      await t.store.transaction((tx) => appendEvent(t.store, tx, 'node.created', { n: 1 }));
      expect(await fanOutSettled(webhooks)).toBe(1);
      const [x, y] = await Promise.all([webhooks.nextDue(hook.id), webhooks.nextDue(hook.id)]);
      expect(x?.delivery.id).toBeDefined();
      expect(y?.delivery.id).toBe(x?.delivery.id);
      expect(await t.store.db.selectFrom('webhook_claims').select('webhook_id').execute()).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
