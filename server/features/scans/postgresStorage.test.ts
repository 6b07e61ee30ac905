/**
 * The scan path on PostgreSQL below the HTTP handler: the group-commit writer (counts, outbox
 * events, deleted nodes, batches of several processes over the same nodes), the shared cache's
 * staleness bound, and the storage's view across two processes' pools (a change committed through
 * one is served by the other within the bound; one salt per day for all).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { PostgresStore } from '../../db/postgresStore.ts';
import type { Store } from '../../db/store.ts';
import { freshPostgresDatabase, postgresMissing } from '../../../test/support/stores.ts';
import { scanOf, seedNode, seedOrg, subscribeToScansOn } from '../../../test/support/scanSeed.ts';
import { PostgresScanRepo } from './postgresRepo.ts';
import { postgresScanStorage } from './postgresStorage.ts';
import { PostgresScanWriter } from './postgresWriter.ts';
import type { NodeEntry } from './resolver.ts';
import { SharedScanCache } from './sharedCache.ts';
import type { ScanStorage } from './storage.ts';
import { subscriptionCheck } from '../webhooks/index.ts';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

/** `n` pools on one fresh database: `n` processes of one service. */
async function processes(n: number): Promise<PostgresStore[]> {
  const database = await freshPostgresDatabase();
  cleanup.push(() => database.drop());
  const stores = await Promise.all(Array.from({ length: n }, () => PostgresStore.open(database.url, { poolSize: 4 })));
  for (const s of stores) cleanup.push(() => s.close());
  return stores;
}

function storageOn(store: PostgresStore, staleMs?: number): ScanStorage {
  const storage = postgresScanStorage({ store, subscribed: subscriptionCheck('postgres'), onError: (err) => console.error(err), ...(staleMs ? { staleMs } : {}) });
  cleanup.push(() => storage.close());
  return storage;
}

async function scanCount(store: Store, id: string): Promise<number> {
  return Number((await store.db.selectFrom('nodes').select('scan_count').where('id', '=', id).executeTakeFirstOrThrow()).scan_count);
}

async function urlServed(storage: ScanStorage, slug: string): Promise<string> {
  const view = await storage.view([{ slug, at: Date.now() }]);
  const entry = view.entry(slug) as NodeEntry;
  return String(entry.own?.payload.url);
}

describe('SharedScanCache (the staleness bound)', () => {
  it('serves only while a read sent less than staleMs ago confirmed it, and never keeps what was loaded across a change', async () => {
    let now = 0;
    let epoch = 1;
    const cache = new SharedScanCache(async () => epoch, 100, { now: () => now });
    expect(cache.fresh()).toBe(false);
    await cache.confirm();
    expect(cache.fresh()).toBe(true);
    const gen = cache.generation;
    cache.put(gen, 'A', { kind: 'unknown' });
    expect(cache.get('A')).toEqual({ kind: 'unknown' });
    now = 99;
    expect(cache.fresh()).toBe(true);
    now = 100;
    expect(cache.fresh()).toBe(false); // sent at 0: too old now
    // A read that took long confirms as of when it was sent, not when it came back.
    let answer!: (e: number) => void;
    const slow = new SharedScanCache(() => new Promise<number>((r) => (answer = r)), 100, { now: () => now });
    const pending = slow.confirm();
    now = 250;
    answer(1);
    await pending;
    expect(slow.fresh()).toBe(false);
    // A change: the epoch moved, everything cached before is dropped, and an entry loaded before
    // the change was known is not kept.
    epoch = 2;
    await cache.confirm();
    expect(cache.get('A')).toBeUndefined();
    cache.put(gen, 'A', { kind: 'deleted' });
    expect(cache.get('A')).toBeUndefined();
    // A notification is applied at once; an older epoch read afterwards changes nothing.
    cache.put(cache.generation, 'B', { kind: 'unknown' });
    cache.moved(3);
    expect(cache.get('B')).toBeUndefined();
    cache.put(cache.generation, 'B', { kind: 'unknown' });
    epoch = 2;
    await cache.confirm();
    expect(cache.get('B')).toEqual({ kind: 'unknown' });
  });
});

describe.skipIf(postgresMissing !== null)(`scan path on PostgreSQL${postgresMissing ? ` (skipped: ${postgresMissing})` : ''}`, () => {
  it('records a batch with its counts, and node.scanned events only for subscribed organizations, none for bots', async () => {
    const [store] = (await processes(1)) as [PostgresStore];
    const org = await seedOrg(store);
    const other = await seedOrg(store);
    const n1 = await seedNode(store, org, { slug: 'AAAAAAAA' });
    const n2 = await seedNode(store, other, { slug: 'BBBBBBBB' });
    await subscribeToScansOn(store, org);
    const writer = new PostgresScanWriter(store, new PostgresScanRepo(), subscriptionCheck('postgres'));
    const ids = await writer.write([scanOf(n1, org, { slug: 'AAAAAAAA' }), scanOf(n2, other), scanOf(n1, org, { is_bot: 1 }), scanOf('gone', org), scanOf(n1, org, { slug: 'AAAAAAAA' })]);
    expect(ids.map((id) => id !== null)).toEqual([true, true, true, false, true]);
    expect(await scanCount(store, n1)).toBe(2);
    expect(await scanCount(store, n2)).toBe(1);
    const events = await store.db.selectFrom('outbox_events').select(['org_id', 'data_json']).orderBy('seq').execute();
    expect(events.map((e) => [e.org_id, JSON.parse(e.data_json).scan_id, JSON.parse(e.data_json).node])).toEqual([
      [org, ids[0], { id: n1, slug: 'AAAAAAAA' }],
      [org, ids[4], { id: n1, slug: 'AAAAAAAA' }],
    ]);
    // A webhook change moves the epoch: the writer asks again.
    await subscribeToScansOn(store, other);
    await writer.write([scanOf(n2, other)]);
    expect(await store.db.selectFrom('outbox_events').select('id').where('org_id', '=', other).execute()).toHaveLength(1);
  });

  it('batches of two processes over the same nodes in opposite orders all commit (no deadlock), every count exact', async () => {
    const stores = await processes(2);
    const org = await seedOrg(stores[0] as Store);
    const nodes = await Promise.all(['AAAAAAAA', 'BBBBBBBB', 'CCCCCCCC', 'DDDDDDDD'].map((slug) => seedNode(stores[0] as Store, org, { slug })));
    const writers = stores.map((s) => new PostgresScanWriter(s, new PostgresScanRepo(), subscriptionCheck('postgres')));
    await Promise.all(
      writers.map(async (w, p) => {
        for (let round = 0; round < 20; round++) {
          const order = p === 0 ? nodes : [...nodes].reverse();
          await Promise.all([w.write(order.map((n) => scanOf(n, org))), w.write(order.map((n) => scanOf(n, org)))]);
        }
      }),
    );
    for (const n of nodes) expect(await scanCount(stores[0] as Store, n)).toBe(80);
  });

  it('serves a change committed through another process, and one salt per day in every process', async () => {
    const [a, b] = (await processes(2)) as [PostgresStore, PostgresStore];
    const org = await seedOrg(a);
    const node = await seedNode(a, org, { slug: 'AAAAAAAA', payload: { url: 'https://example.com/old' } });
    const onA = storageOn(a, 400);
    const onB = storageOn(b, 400);
    expect(await urlServed(onA, 'AAAAAAAA')).toBe('https://example.com/old');
    const [saltA, saltB] = await Promise.all([onA.view([{ slug: 'AAAAAAAA', at: Date.now() }]), onB.view([{ slug: 'AAAAAAAA', at: Date.now() }])]);
    expect(saltA.salt(Date.now())).toBe(saltB.salt(Date.now()));
    // The change, committed through process B (as its API would, which moves the epoch).
    await b.transaction(async (tx) => {
      await tx.updateTable('nodes').set({ payload_json: JSON.stringify({ url: 'https://example.com/new' }) }).where('id', '=', node).execute();
    });
    const committedAt = performance.now();
    // Process A: the old destination at most 400 ms after the commit, never after.
    let served = 'https://example.com/old';
    while (performance.now() - committedAt <= 400) {
      const startedAt = performance.now();
      served = await urlServed(onA, 'AAAAAAAA');
      if (startedAt - committedAt > 400) expect(served).toBe('https://example.com/new');
    }
    expect(await urlServed(onA, 'AAAAAAAA')).toBe('https://example.com/new');
    expect(served).toBe('https://example.com/new');
  });

  it('drops a cached entry as soon as another process commits a change (NOTIFY), long before the bound', async () => {
    const [a, b] = (await processes(2)) as [PostgresStore, PostgresStore];
    const org = await seedOrg(a);
    const node = await seedNode(a, org, { slug: 'AAAAAAAA', payload: { url: 'https://example.com/old' } });
    const onA = storageOn(a, 60_000); // re-read every 15 s: only a notification can be quicker
    expect(await urlServed(onA, 'AAAAAAAA')).toBe('https://example.com/old');
    // A's listening connection is up (its LISTEN is the last statement it ran).
    const listening = async () =>
      Number((await sql<{ n: number }>`SELECT count(*) AS n FROM pg_stat_activity WHERE query = 'LISTEN waymark_scan_cache' AND datname = current_database()`.execute(b.db)).rows[0]?.n);
    for (const until = Date.now() + 10_000; (await listening()) === 0 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
    expect(await listening()).toBe(1);
    await b.transaction(async (tx) => {
      await tx.updateTable('nodes').set({ payload_json: JSON.stringify({ url: 'https://example.com/new' }) }).where('id', '=', node).execute();
    });
    let served = '';
    for (const until = Date.now() + 10_000; served !== 'https://example.com/new' && Date.now() < until; ) {
      served = await urlServed(onA, 'AAAAAAAA');
      if (served !== 'https://example.com/new') await new Promise((r) => setTimeout(r, 10));
    }
    expect(served).toBe('https://example.com/new');
  });
});
