/**
 * The roll-up fold and the analytics queries on both backends (Kysely, analyticsRepo.ts), fed by
 * each dialect's own scan writer; and on PostgreSQL what only several writers and folders can do
 * to it: scans committed out of id order, and folds running in several processes at once.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../platform/clock.ts';
import type { Executor, Store } from '../../db/store.ts';
import { copySqliteToPostgres } from '../../db/copyToPostgres.ts';
import { PostgresStore } from '../../db/postgresStore.ts';
import { SqliteStore } from '../../db/sqliteStore.ts';
import { freshPostgresDatabase, openTestStore, postgresMissing, type TestStore } from '../../../test/support/stores.ts';
import { scanOf, scanWriterFor, seedNode, seedOrg } from '../../../test/support/scanSeed.ts';
import { ScanAnalytics } from './analytics.ts';
import { AnalyticsRepo } from './analyticsRepo.ts';
import { PostgresScanRepo } from './postgresRepo.ts';
import { PostgresScanWriter } from './postgresWriter.ts';
import { subscriptionCheck } from '../webhooks/index.ts';

const T0 = Date.parse('2026-11-21T12:00:00.000Z');
const backends = [
  { dialect: 'sqlite' as const, skip: null },
  { dialect: 'postgres' as const, skip: postgresMissing },
];

const opened: TestStore[] = [];
afterEach(async () => {
  for (const t of opened.splice(0).reverse()) await t.close();
});

async function open(dialect: 'sqlite' | 'postgres'): Promise<Store> {
  const t = await openTestStore(dialect);
  opened.push(t);
  return t.store;
}

async function pagesOf<T>(pages: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const page of pages) out.push(page);
  return out;
}

async function count(store: Store, table: 'scan_events' | 'scan_events_by_node', nodeId: string): Promise<number> {
  const row = await store.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('node_id', '=', nodeId).executeTakeFirstOrThrow();
  return Number(row.n);
}

for (const { dialect, skip } of backends) {
  describe.skipIf(skip !== null)(`scan analytics on ${dialect}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    it('folds what the writer recorded into figures, breakdowns, top nodes and the scan list', async () => {
      const store = await open(dialect);
      const org = await seedOrg(store);
      const n1 = await seedNode(store, org, { slug: 'AAAAAAAA' });
      const n2 = await seedNode(store, org, { slug: 'BBBBBBBB' });
      const write = scanWriterFor(store);
      await write([
        scanOf(n1, org, { ts: T0, visitor_hash: 'a' }),
        scanOf(n1, org, { ts: T0 + 1000, visitor_hash: 'a', device_type: 'desktop', os: 'windows', browser: null, country: null }),
        scanOf(n1, org, { ts: T0 + 3_600_000, visitor_hash: 'b', source: 'nfc', rule_id: 'r1' }), // written before migration 074: reported as nfc_unverified
        scanOf(n1, org, { ts: T0 + 2000, is_bot: 1, visitor_hash: 'bot' }),
        scanOf(n2, org, { ts: T0 + 86_400_000, visitor_hash: 'c' }),
      ]);
      const analytics = new ScanAnalytics(store, new ManualClock(T0 + 3 * 86_400_000));
      await analytics.caughtUp();
      const range = { from: '2026-11-21', to: '2026-11-23', interval: 'day' as const };
      const node = await analytics.forNode({ id: n1, slug: 'AAAAAAAA' }, range);
      expect(node.totals).toEqual({ scans: 3, unique_visitors: 2 });
      expect(node.series.map((b) => b.scans)).toEqual([3, 0]);
      expect(node.breakdowns.device_type).toEqual([
        { value: 'mobile', scans: 2 },
        { value: 'desktop', scans: 1 },
      ]);
      expect(node.breakdowns.country).toEqual([
        { value: 'FR', scans: 2 },
        { value: null, scans: 1 },
      ]);
      expect(node.breakdowns.rule).toEqual([
        { value: null, scans: 2 },
        { value: 'r1', scans: 1 },
      ]);
      const hourly = await analytics.forNode({ id: n1, slug: 'AAAAAAAA' }, { from: '2026-11-21T12:00:00Z', to: '2026-11-21T14:00:00Z', interval: 'hour' });
      expect(hourly.series.map((b) => [b.scans, b.unique_visitors])).toEqual([
        [2, 1],
        [1, 1],
      ]);
      const orgWide = await analytics.forOrg(org, { ...range, interval: 'week' });
      expect(orgWide.totals).toEqual({ scans: 4, unique_visitors: 3, nodes_scanned: 2 });
      expect(orgWide.top_nodes.map((t) => [t.slug, t.scans])).toEqual([
        ['AAAAAAAA', 3],
        ['BBBBBBBB', 1],
      ]);
      // A range not on whole days: the top nodes and nodes scanned take the edge hours from the
      // per-node roll-ups and the whole days between from scan_node_days (migration 071).
      // Here: the hours of the 20th from 13:00 (none), the whole 21st (node 1's three), the 22nd
      // up to 13:00 (node 2's one at 12:00).
      const edges = await analytics.forOrg(org, { from: '2026-11-20T13:00:00Z', to: '2026-11-22T13:00:00Z', interval: 'hour' });
      expect(edges.totals).toEqual({ scans: 4, unique_visitors: 3, nodes_scanned: 2 });
      expect(edges.top_nodes.map((t) => [t.slug, t.scans])).toEqual([
        ['AAAAAAAA', 3],
        ['BBBBBBBB', 1],
      ]);
      expect(edges.breakdowns.source).toEqual([
        { value: 'qr', scans: 3 },
        { value: 'nfc_unverified', scans: 1 },
      ]);
      const late = await analytics.forOrg(org, { from: '2026-11-21T13:00:00Z', to: '2026-11-22T12:00:00Z', interval: 'hour' });
      expect(late.totals).toEqual({ scans: 1, unique_visitors: 1, nodes_scanned: 1 });
      expect(late.top_nodes.map((t) => [t.slug, t.scans])).toEqual([['AAAAAAAA', 1]]);
      const list = await analytics.listScans(n1, { limit: 10, offset: 0 });
      expect(list.total).toBe(3);
      expect(list.rows.map((r) => r.timestamp)).toEqual([T0 + 3_600_000, T0 + 1000, T0].map((t) => new Date(t).toISOString()));
      expect((await analytics.listScans(n1, { bots: 'only', limit: 10, offset: 0 })).total).toBe(1);
      const pages = await pagesOf(analytics.scanPages(n1, { bots: 'include' }, 3));
      expect(pages.map((p) => p.length)).toEqual([3, 1]);
      expect(pages.flat()[1]).toMatchObject({ bot: true, visitor: 'bot' }); // newest first: T0 + 2 s
    });

    it('folds each scan once however often it runs, and deleting a node deletes its scans, folded or not', async () => {
      const store = await open(dialect);
      const org = await seedOrg(store);
      const n1 = await seedNode(store, org, { slug: 'AAAAAAAA' });
      const n2 = await seedNode(store, org, { slug: 'BBBBBBBB' });
      const write = scanWriterFor(store);
      const analytics = new ScanAnalytics(store, new ManualClock(T0));
      await write([scanOf(n1, org), scanOf(n2, org), scanOf(n1, org)]);
      // caughtUp: on PostgreSQL a plain catchUp folds only below the cluster's transaction horizon,
      // which another suite's open transaction holds back. Then once more: nothing is folded twice.
      await analytics.caughtUp();
      await analytics.catchUp();
      await write([scanOf(n1, org), scanOf(n2, org)]);
      expect(await count(store, 'scan_events_by_node', n1)).toBe(2);
      await store.db.deleteFrom('nodes').where('id', '=', n1).execute();
      expect(await count(store, 'scan_events', n1)).toBe(0);
      expect(await count(store, 'scan_events_by_node', n1)).toBe(0);
      await analytics.caughtUp();
      expect((await analytics.listScans(n2, { limit: 10, offset: 0 })).total).toBe(2);
      expect(await count(store, 'scan_events_by_node', n2)).toBe(2);
      // The organization's figures lose the deleted node's scans too (its sums are taken off
      // scan_org_rollups), and a value left at 0 is not listed.
      await analytics.caughtUp();
      const orgWide = await analytics.forOrg(org, { from: '2026-11-01', to: '2026-12-01' });
      expect(orgWide.totals.scans).toBe(2);
      expect(orgWide.totals.nodes_scanned).toBe(1);
      expect(orgWide.series.reduce((sum, b) => sum + b.scans, 0)).toBe(2);
      expect(orgWide.breakdowns.device_type).toEqual([{ value: 'mobile', scans: 2 }]);
      expect(orgWide.top_nodes.map((t) => [t.slug, t.scans])).toEqual([['BBBBBBBB', 2]]);
    });

    it("an organization's scans, series and breakdowns in whole days (per-day sums, migration 087) equal the raw scans, by hour too, and after a node's delete", async () => {
      const store = await open(dialect);
      const org = await seedOrg(store);
      const other = await seedOrg(store);
      const nodes = [await seedNode(store, org, { slug: 'AAAAAAAA' }), await seedNode(store, org, { slug: 'BBBBBBBB' }), await seedNode(store, org, { slug: 'CCCCCCCC' })];
      const elsewhere = await seedNode(store, other, { slug: 'DDDDDDDD' });
      const write = scanWriterFor(store);
      const analytics = new ScanAnalytics(store, new ManualClock(T0 + 20 * 86_400_000));
      let seed = 11;
      const next = (n: number) => {
        seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
        return Math.floor(seed / 65_536) % n;
      };
      const devices = ['mobile', 'desktop', 'tablet'];
      const countries = ['FR', 'DE', null, 'US'];
      // 1,200 scans over 12 days on three nodes (and another organization's), folded in rounds.
      for (let round = 0; round < 3; round++) {
        const scans = [];
        for (let i = 0; i < 400; i++) {
          const node = next(8) === 0 ? elsewhere : (nodes[next(3)] as string);
          const day = next(12);
          scans.push(
            scanOf(node, node === elsewhere ? other : org, {
              ts: T0 + day * 86_400_000 + next(86_400_000),
              device_type: devices[next(3)] as string,
              country: countries[next(4)] as string | null,
              is_bot: next(10) === 0 ? 1 : 0,
            }),
          );
        }
        await write(scans);
        await analytics.caughtUp();
      }
      // The raw human scans of the organization: total, per bucket, per device type and country.
      const raw = async (fromMs: number, toMs: number, bucketMs: number, offsetMs = 0) => {
        const rows = await store.db.selectFrom('scan_events').select(['ts', 'device_type', 'country']).where('org_id', '=', org).where('is_bot', '=', 0).where('ts', '>=', fromMs).where('ts', '<', toMs).execute();
        const series = Array.from({ length: Math.ceil((toMs - fromMs + offsetMs) / bucketMs) }, () => 0);
        const tally = (values: Array<string | null>) => {
          const counts = new Map<string | null, number>();
          for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
          return [...counts].map(([value, scans]) => ({ value, scans })).sort((a, b) => b.scans - a.scans || String(a.value ?? '').localeCompare(String(b.value ?? '')));
        };
        for (const r of rows) series[Math.floor((Number(r.ts) - fromMs + offsetMs) / bucketMs)]! += 1;
        return { total: rows.length, series, device_type: tally(rows.map((r) => r.device_type)), country: tally(rows.map((r) => r.country)) };
      };
      const check = async () => {
        const from = Date.parse('2026-11-21');
        const to = Date.parse('2026-12-03');
        const expected = await raw(from, to, 86_400_000);
        expect(expected.total).toBeGreaterThan(300);
        for (const interval of ['day', 'week', 'hour'] as const) {
          const got = await analytics.forOrg(org, { from: '2026-11-21', to: '2026-12-03', interval });
          expect(got.totals.scans).toBe(expected.total);
          expect(got.breakdowns.device_type).toEqual(expected.device_type);
          expect(got.breakdowns.country).toEqual(expected.country);
          expect(got.series.reduce((sum, b) => sum + b.scans, 0)).toBe(expected.total);
        }
        expect((await analytics.forOrg(org, { from: '2026-11-21', to: '2026-12-03', interval: 'day' })).series.map((b) => b.scans)).toEqual(expected.series);
        // Weeks start on Monday: 2026-11-21 is a Saturday, five days into its week.
        expect((await analytics.forOrg(org, { from: '2026-11-21', to: '2026-12-03', interval: 'week' })).series.map((b) => b.scans)).toEqual((await raw(from, to, 7 * 86_400_000, 5 * 86_400_000)).series);
        // Not on whole days: the hourly sums (migration 071).
        const edgeFrom = Date.parse('2026-11-22T05:00:00Z');
        const edgeTo = Date.parse('2026-11-26T19:00:00Z');
        const edges = await analytics.forOrg(org, { from: '2026-11-22T05:00:00Z', to: '2026-11-26T19:00:00Z', interval: 'hour' });
        const hourly = await raw(edgeFrom, edgeTo, 3_600_000);
        expect(edges.totals.scans).toBe(hourly.total);
        expect(edges.series.map((b) => b.scans)).toEqual(hourly.series);
        expect(edges.breakdowns.country).toEqual(hourly.country);
      };
      await check();
      // A deleted node's scans leave the per-day sums as they leave the hourly ones.
      await store.db.deleteFrom('nodes').where('id', '=', nodes[0] as string).execute();
      await check();
    });

    it('unique visitors from the per-day counts the fold keeps equal the distinct (day, key) pairs of the raw scans', async () => {
      const store = await open(dialect);
      const org = await seedOrg(store);
      const nodes = [await seedNode(store, org, { slug: 'AAAAAAAA' }), await seedNode(store, org, { slug: 'BBBBBBBB' }), await seedNode(store, org, { slug: 'CCCCCCCC' })];
      const write = scanWriterFor(store);
      const analytics = new ScanAnalytics(store, new ManualClock(T0 + 20 * 86_400_000));
      // 2,400 scans over 12 days from a pool of 30 visitors a day (keys are per day), bots among
      // them, written and folded in several rounds: a day's visitors reach it in many chunks of
      // 500, and the same key comes back in a later chunk and on other nodes.
      let seed = 7;
      const next = (n: number) => {
        seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
        return Math.floor(seed / 65_536) % n;
      };
      for (let round = 0; round < 4; round++) {
        const scans = [];
        for (let i = 0; i < 600; i++) {
          const day = next(12);
          const node = nodes[next(3)] as string;
          scans.push(scanOf(node, org, { ts: T0 + day * 86_400_000 + next(86_400_000), visitor_hash: `d${day}-v${next(30)}`, is_bot: next(10) === 0 ? 1 : 0 }));
        }
        await write(scans);
        await analytics.caughtUp();
      }
      // The answers from the raw scans: distinct (day, key) pairs of human scans, by bucket.
      const raw = async (nodeId: string | null, fromMs: number, toMs: number, bucketMs: number, offsetMs = 0) => {
        let q = store.db.selectFrom('scan_events').select(['ts', 'visitor_hash']).where('org_id', '=', org).where('is_bot', '=', 0).where('ts', '>=', fromMs).where('ts', '<', toMs);
        if (nodeId) q = q.where('node_id', '=', nodeId);
        const pairs = new Map<number, Set<string>>();
        const all = new Set<string>();
        for (const r of await q.execute()) {
          const key = `${Math.floor(Number(r.ts) / 86_400_000)}|${r.visitor_hash}`;
          const bucket = Math.floor((Number(r.ts) - fromMs + offsetMs) / bucketMs);
          if (!pairs.has(bucket)) pairs.set(bucket, new Set());
          pairs.get(bucket)?.add(key);
          all.add(key);
        }
        const buckets = Math.ceil((toMs - fromMs + offsetMs) / bucketMs);
        return { total: all.size, series: Array.from({ length: buckets }, (_, b) => pairs.get(b)?.size ?? 0) };
      };
      const from = Date.parse('2026-11-21');
      const to = Date.parse('2026-12-03');
      for (const nodeId of [...nodes, null]) {
        const figures = (input: { from: string; to: string; interval: 'hour' | 'day' | 'week' }) =>
          nodeId ? analytics.forNode({ id: nodeId, slug: 'X' }, input) : analytics.forOrg(org, input);
        const expected = await raw(nodeId, from, to, 86_400_000);
        expect(expected.total).toBeGreaterThan(100);
        const byDay = await figures({ from: '2026-11-21', to: '2026-12-03', interval: 'day' });
        expect(byDay.totals.unique_visitors).toBe(expected.total);
        expect(byDay.series.map((b) => b.unique_visitors)).toEqual(expected.series);
        // Weeks start on Monday: 2026-11-21 is a Saturday, five days into its week.
        const byWeek = await figures({ from: '2026-11-21', to: '2026-12-03', interval: 'week' });
        expect(byWeek.totals.unique_visitors).toBe(expected.total);
        expect(byWeek.series.map((b) => b.unique_visitors)).toEqual((await raw(nodeId, from, to, 7 * 86_400_000, 5 * 86_400_000)).series);
        // By hour, a range not on whole days: the whole days from the counts, the edges from the key sets.
        const edgeFrom = Date.parse('2026-11-22T05:00:00Z');
        const edgeTo = Date.parse('2026-11-26T19:00:00Z');
        const byHour = await figures({ from: '2026-11-22T05:00:00Z', to: '2026-11-26T19:00:00Z', interval: 'hour' });
        const hourly = await raw(nodeId, edgeFrom, edgeTo, 3_600_000);
        expect(byHour.totals.unique_visitors).toBe(hourly.total);
        expect(byHour.series.map((b) => b.unique_visitors)).toEqual(hourly.series);
      }
    });
  });
}

describe.skipIf(postgresMissing !== null)(`scan analytics with several PostgreSQL writers and folders${postgresMissing ? ` (skipped: ${postgresMissing})` : ''}`, () => {
  it('counts a scan whose transaction commits after a newer scan was folded (ids are not commit order)', async () => {
    const first = await open('postgres');
    const org = await seedOrg(first);
    const node = await seedNode(first, org, { slug: 'AAAAAAAA' });
    const repo = new PostgresScanRepo();
    const analytics = new ScanAnalytics(first, new ManualClock(T0));
    // Transaction A takes the lower scan id and stays open; B takes the next one and commits.
    let releaseA!: () => void;
    const holdA = new Promise<void>((resolve) => (releaseA = resolve));
    let insertedA!: () => void;
    const aInserted = new Promise<void>((resolve) => (insertedA = resolve));
    const a = first.transaction(async (tx) => {
      const [id] = await repo.insertScans(tx, [{ ...scanOf(node, org), slug: undefined } as never]);
      insertedA();
      await holdA;
      return id as number;
    });
    await aInserted;
    const [idB] = await new PostgresScanWriter(first, repo, subscriptionCheck('postgres')).write([scanOf(node, org)]);
    // A fold now must not pass A by: it folds nothing at all while A is open (B is newer than A).
    await analytics.catchUp();
    expect((await analytics.listScans(node, { bots: 'include', limit: 10, offset: 0 })).total).toBe(0);
    // A query started while A is open waits for it, then counts both.
    const query = analytics.caughtUp().then(() => analytics.listScans(node, { limit: 10, offset: 0 }));
    releaseA();
    const idA = await a;
    expect(idA).toBeLessThan(idB as number);
    const list = await query;
    expect(list.total).toBe(2);
    expect(list.rows.map((r) => r.id).sort((x, y) => x - y)).toEqual([idA, idB]);
  });

  it('several processes writing and folding at once count every scan exactly once, and every visitor', async () => {
    // Three pools on one database stand for three processes.
    const database = await freshPostgresDatabase();
    const all = await Promise.all([0, 1, 2].map(() => PostgresStore.open(database.url, { poolSize: 4 })));
    try {
      const org = await seedOrg(all[0] as Store);
      const nodes = await Promise.all(['AAAAAAAA', 'BBBBBBBB', 'CCCCCCCC'].map((slug) => seedNode(all[0] as Store, org, { slug })));
      const writers = all.map((s) => new PostgresScanWriter(s, new PostgresScanRepo(), subscriptionCheck('postgres')));
      const folders = all.map((s) => new ScanAnalytics(s, new ManualClock(T0)));
      let humans = 0;
      let bots = 0;
      const work = all.map(async (_, p) => {
        for (let round = 0; round < 15; round++) {
          const batch = Array.from({ length: 7 }, (_, i) => scanOf(nodes[(round + i + p) % 3] as string, org, { is_bot: i === 6 ? 1 : 0, visitor_hash: `v${(round * 7 + i + p) % 11}` }));
          humans += 6;
          bots += 1;
          await Promise.all([(writers[p] as PostgresScanWriter).write(batch), (folders[p] as ScanAnalytics).catchUp()]);
        }
      });
      await Promise.all(work);
      await Promise.all(folders.map((f) => f.caughtUp()));
      const total = await (folders[1] as ScanAnalytics).forOrg(org, { from: '2026-11-01', to: '2026-12-01' });
      expect(total.totals.scans).toBe(humans);
      // The per-day visitor counts (migration 081) kept by folds in three processes: the raw scans' distinct keys.
      const rawVisitors = async (nodeId?: string) => {
        let q = (all[0] as Store).db.selectFrom('scan_events').select((eb) => eb.fn.count<number>('visitor_hash').distinct().as('n')).where('is_bot', '=', 0);
        if (nodeId) q = q.where('node_id', '=', nodeId);
        return Number((await q.executeTakeFirstOrThrow()).n);
      };
      expect(total.totals.unique_visitors).toBe(await rawVisitors());
      for (const n of nodes) expect((await (folders[0] as ScanAnalytics).forNode({ id: n, slug: 'X' }, { from: '2026-11-01', to: '2026-12-01' })).totals.unique_visitors).toBe(await rawVisitors(n));
      const listed = await Promise.all(nodes.map((n) => (folders[2] as ScanAnalytics).listScans(n, { bots: 'include', limit: 1, offset: 0 })));
      expect(listed.reduce((sum, l) => sum + l.total, 0)).toBe(humans + bots);
      const counts = await (all[0] as Store).db.selectFrom('nodes').select((eb) => eb.fn.sum<number>('scan_count').as('n')).executeTakeFirstOrThrow();
      expect(Number(counts.n)).toBe(humans);
    } finally {
      for (const s of all) await s.close();
      await database.drop();
    }
  });

  it('folds a transaction of many scans (a bulk load) chunk by chunk, each scan once, each chunk reading only its own rows', async () => {
    const store = await open('postgres');
    const org = await seedOrg(store);
    const node = await seedNode(store, org, { slug: 'AAAAAAAA' });
    const write = scanWriterFor(store);
    await write([scanOf(node, org), scanOf(node, org), scanOf(node, org)]);
    const BIG = 20_000;
    await store.transaction(async (tx) => {
      await sql`INSERT INTO scan_events (node_id, org_id, ts, device_type, os, browser, country, source, rule_id, outcome, is_bot, visitor_hash)
        SELECT ${node}, ${org}, ${T0}::bigint + g.i * 1000, 'mobile', 'ios', 'Chrome', 'FR', 'qr', NULL, 'redirect', 0, 'v' || (g.i % 50)::text
        FROM generate_series(0, ${BIG - 1}) AS g(i)`.execute(tx);
    });
    await write([scanOf(node, org), scanOf(node, org)]);
    await sql`ANALYZE scan_events`.execute(store.db);
    const repo = new AnalyticsRepo('postgres');
    // Blocks of scan_events and its indexes that the chunk's transaction asked for.
    const blocksRead = (tx: Executor) =>
      sql<{ n: string }>`SELECT sum(pg_stat_get_xact_blocks_fetched(oid))::text AS n FROM pg_class
        WHERE oid = 'scan_events'::regclass OR oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'scan_events'::regclass)`.execute(tx).then((r) => Number(r.rows[0]!.n));
    const chunks: Array<{ read: number; blocks: number }> = [];
    for (;;) {
      const chunk = await store.transaction(async (tx) => {
        const before = await blocksRead(tx);
        const { read } = await repo.fold(tx, 1000);
        return { read, blocks: (await blocksRead(tx)) - before };
      });
      if (chunk.read === 0) break;
      chunks.push(chunk);
    }
    expect(chunks.map((c) => c.read)).toEqual([...Array(20).fill(1000), 5]);
    expect(await count(store, 'scan_events_by_node', node)).toBe(BIG + 5);
    const total = await store.db.selectFrom('scan_rollups').select((eb) => eb.fn.sum<number>('scans').as('n')).where('dim', '=', '').executeTakeFirstOrThrow();
    expect(Number(total.n)).toBe(BIG + 5);
    // The first chunks, which end inside the big transaction, read no more than its last: a scan
    // that went on to the end of the transaction read ~20 times the rows (PostgreSQL 15 does not
    // end a btree scan at a row comparison's upper bound, analyticsRepo.postgresChunk).
    const last = chunks[19]!.blocks;
    for (const c of chunks.slice(0, 19)) expect(c.blocks).toBeLessThan(last * 2);
  });

  it('an instance moved from SQLite (waymark migrate) folds on where it stood: no scan counted twice or missed', async () => {
    const sqlite = await open('sqlite');
    const org = await seedOrg(sqlite);
    const node = await seedNode(sqlite, org, { slug: 'AAAAAAAA' });
    const writeOnSqlite = scanWriterFor(sqlite);
    await writeOnSqlite([scanOf(node, org), scanOf(node, org), scanOf(node, org, { is_bot: 1 })]);
    await new ScanAnalytics(sqlite, new ManualClock(T0)).catchUp();
    await writeOnSqlite([scanOf(node, org), scanOf(node, org)]); // not folded before the move
    const database = await freshPostgresDatabase();
    const moved = await PostgresStore.open(database.url, { poolSize: 2 });
    try {
      await copySqliteToPostgres((sqlite as SqliteStore).connection, moved.pool);
      const analytics = new ScanAnalytics(moved, new ManualClock(T0));
      await analytics.caughtUp();
      expect((await analytics.listScans(node, { limit: 1, offset: 0 })).total).toBe(4);
      expect((await analytics.listScans(node, { bots: 'include', limit: 1, offset: 0 })).total).toBe(5);
      await scanWriterFor(moved)([scanOf(node, org)]);
      await analytics.caughtUp();
      const figures = await analytics.forNode({ id: node, slug: 'AAAAAAAA' }, { from: '2026-11-01', to: '2026-12-01' });
      expect(figures.totals.scans).toBe(5);
    } finally {
      await moved.close();
      await database.drop();
    }
  });
});
