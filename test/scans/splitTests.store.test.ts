/**
 * Split tests on both storage backends (issue 17 item 4): each storage's own scan path (SQLite's
 * ScanCache and writer, PostgreSQL's shared cache and writer) picks the variant through the rule
 * registry, the one set-based fold (analyticsRepo.ts) counts scans and visitors per variant, and
 * promoting a variant is one transaction. On PostgreSQL also migration 065's backfill, which must
 * stop at the fold's (xid, id) watermark, not at an id.
 */
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PostgresStore, postgresMigrationsDir } from '../../server/db/postgresStore.ts';
import { SqliteStore } from '../../server/db/sqliteStore.ts';
import type { Store } from '../../server/db/store.ts';
import { ScanAnalytics } from '../../server/features/scans/analytics.ts';
import { postgresScanStorage } from '../../server/features/scans/postgresStorage.ts';
import { resolve } from '../../server/features/scans/resolver.ts';
import { sqliteScanStorage } from '../../server/features/scans/sqliteStorage.ts';
import { isPending, type ScanStorage } from '../../server/features/scans/storage.ts';
import type { ScanRecord, WriteResult } from '../../server/features/scans/writer.ts';
import { subscriptionCheck } from '../../server/features/webhooks/index.ts';
import { ManualClock } from '../../server/platform/clock.ts';
import { ValidationError } from '../../server/platform/errors.ts';
import { backends, insertOrg, nodeServices, openTestStore, type TestStore } from '../support/nodeStores.ts';
import { scanOf, scanWriterFor, seedNode } from '../support/scanSeed.ts';
import { freshPostgresDatabase } from '../support/stores.ts';
import { needs } from '../support/system.ts';

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const t of opened.splice(0).reverse()) await t.close();
});

async function open(dialect: 'sqlite' | 'postgres'): Promise<Store> {
  const t: TestStore = await openTestStore(dialect);
  opened.push(t);
  return t.store;
}

/** The scan path's storage of the store's backend, as the app opens it. */
function scanStorageOf(store: Store): ScanStorage {
  const onError = (err: unknown) => {
    throw err;
  };
  const storage =
    store instanceof SqliteStore
      ? sqliteScanStorage({ db: store.connection, flush: 'in-commit', backgroundCheckpoints: false, onError })
      : postgresScanStorage({ store: store as PostgresStore, subscribed: subscriptionCheck('postgres'), onError });
  opened.push(storage);
  return storage;
}

/** What the scan path serves `visitor` at `at`: the serving rule's id (null = the node's payload) and where it redirects. */
async function served(storage: ScanStorage, slug: string, nodeId: string, at: number, visitor: string) {
  const pending = storage.view([{ slug, at }]);
  const view = isPending(pending) ? await pending : pending;
  const r = resolve(view.entry(slug), { at, country: 'FR', device_type: 'mobile', os: 'ios', visitor, node_id: nodeId }, at);
  if (r.kind !== 'content') throw new Error(`expected content, got ${r.status}`);
  return { rule_id: r.rule?.id ?? null, url: r.content.payload.url as string };
}

function write(storage: ScanStorage, records: ScanRecord[]): Promise<WriteResult> {
  return new Promise((ok, fail) => storage.write(records, (err, results) => (err ? fail(err) : ok(results as WriteResult))));
}

for (const { dialect, skip } of backends) {
  describe.skipIf(skip !== null)(`split tests on ${dialect}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    it('each variant is served by the scan path and counted by the fold: scans and unique visitors per variant, from the hour the test began', async () => {
      const store = await open(dialect);
      const clock = new ManualClock('2026-12-07T10:15:00.000Z');
      const services = nodeServices(store, clock);
      const org = await insertOrg(store);
      const node = await services.nodes.create(org, { label: 'Split', function_type: 'redirect', payload: { url: 'https://example.com/a' } });
      const storage = scanStorageOf(store);
      const scanAt = (at: number, visitor: string, rule_id: string | null, is_bot = 0) =>
        scanOf(node.id, org, { slug: node.slug, ts: at, visitor_hash: visitor, rule_id, is_bot });

      // Before the test: the node's payload, not to be credited to it as a variant.
      await write(storage, [0, 1, 2].map((i) => scanAt(clock.now() + i, `early${i}`, null)));

      clock.set('2026-12-07T12:30:00.000Z');
      const rule = (weight: number, url: string) =>
        services.rules.create(org, node.slug, { rule_type: 'traffic_split', conditions: { weight }, function_type: 'redirect', payload: { url } });
      const b = await rule(30, 'https://example.com/b');
      const c = await rule(20, 'https://example.com/c');
      await services.rules.create(org, node.slug, { rule_type: 'geo_based', conditions: { countries: ['JP'] }, function_type: 'redirect', payload: { url: 'https://example.com/jp' } });
      const urlOf = new Map<string | null, string>([[b.id, 'https://example.com/b'], [c.id, 'https://example.com/c'], [null, 'https://example.com/a']]);

      // 60 visitors, visitor i scans 1 + (i % 3) times; the variant is what the scan path picks.
      const tally = new Map<string | null, { scans: number; visitors: Set<string> }>([...urlOf.keys()].map((k) => [k, { scans: 0, visitors: new Set<string>() }]));
      const at0 = Date.parse('2026-12-07T13:00:00.000Z');
      let n = 0;
      const records: ScanRecord[] = [];
      for (let i = 0; i < 60; i++) {
        for (let k = 0; k <= i % 3; k++) {
          const at = at0 + n++ * 1000;
          const got = await served(storage, node.slug, node.id, at, `visitor${i}`);
          expect(got.url).toBe(urlOf.get(got.rule_id));
          const t = tally.get(got.rule_id)!;
          t.scans++;
          t.visitors.add(`visitor${i}`);
          records.push(scanAt(at, `visitor${i}`, got.rule_id));
        }
      }
      records.push(scanAt(at0 + n * 1000, 'bot', b.id, 1)); // bots are never counted
      // Two batches, as two group commits.
      await write(storage, records.slice(0, 50));
      await write(storage, records.slice(50));
      for (const t of tally.values()) expect(t.scans).toBeGreaterThan(0);

      clock.set('2026-12-07T18:00:00.000Z');
      const analytics = new ScanAnalytics(store, clock);
      await analytics.caughtUp();
      const variants = (await services.rules.variants(org, node.slug)).map(({ rule: r, share }) => ({ id: r.id, weight: share, enabled: r.enabled, function_type: r.function_type, created_at: r.created_at }));
      const figures = await analytics.forNode(node, { from: '2026-12-07', to: '2026-12-08' }, { own_function_type: 'redirect', variants });
      expect(figures.totals.scans).toBe(3 + 120);
      expect(figures.split_test).toEqual({
        since: '2026-12-07T12:00:00.000Z',
        variants: [
          { rule_id: b.id, weight: 30, enabled: true, function_type: 'redirect', scans: tally.get(b.id)!.scans, unique_visitors: tally.get(b.id)!.visitors.size },
          { rule_id: c.id, weight: 20, enabled: true, function_type: 'redirect', scans: tally.get(c.id)!.scans, unique_visitors: tally.get(c.id)!.visitors.size },
          { rule_id: null, weight: 50, enabled: true, function_type: 'redirect', scans: tally.get(null)!.scans, unique_visitors: tally.get(null)!.visitors.size },
        ],
      });
    });

    it('promoting a variant replaces the payload and deletes only the split rules, in one transaction; the scan path follows', async () => {
      const store = await open(dialect);
      const clock = new ManualClock('2026-12-07T15:00:00.000Z');
      const services = nodeServices(store, clock);
      const org = await insertOrg(store);
      const node = await services.nodes.create(org, { label: 'Split', function_type: 'redirect', payload: { url: 'https://example.com/a' } });
      const geo = await services.rules.create(org, node.slug, { rule_type: 'geo_based', conditions: { countries: ['JP'] }, function_type: 'redirect', payload: { url: 'https://example.com/jp' } });
      const b = await services.rules.create(org, node.slug, { rule_type: 'traffic_split', conditions: { weight: 50 }, function_type: 'vcard', payload: { first_name: 'Grace' } });
      await services.rules.create(org, node.slug, { rule_type: 'traffic_split', conditions: { weight: 50 }, function_type: 'redirect', payload: { url: 'https://example.com/c' } });
      const storage = scanStorageOf(store);

      const promoted = await services.rules.promote(org, node.slug, b.id);
      expect(promoted).toMatchObject({ function_type: 'vcard', payload: { first_name: 'Grace' } });
      expect((await services.rules.list(org, node.slug)).map((r) => r.id)).toEqual([geo.id]);
      // PostgreSQL's cache follows within its staleness bound.
      await vi.waitFor(
        async () => {
          const pending = storage.view([{ slug: node.slug, at: clock.now() }]);
          const view = isPending(pending) ? await pending : pending;
          const r = resolve(view.entry(node.slug), { at: clock.now(), country: 'FR', device_type: 'mobile', os: 'ios', visitor: 'v', node_id: node.id }, clock.now());
          expect(r.kind === 'content' && r.content).toMatchObject({ function_type: 'vcard', payload: { first_name: 'Grace' } });
        },
        { timeout: 10_000, interval: 50 },
      );

      // A template refuses the variant: nothing changes (the node update and the deletes roll back together).
      const template = await services.templates.create(org, { name: 'Venue', function_type: 'wifi', payload: { ssid: 'Venue', security: 'nopass' }, locked_fields: ['ssid'] });
      const bound = await services.nodes.create(org, { label: 'Bound', function_type: 'wifi', payload: {}, template_id: template.id });
      const other = await services.rules.create(org, bound.slug, { rule_type: 'traffic_split', conditions: { weight: 40 }, function_type: 'wifi', payload: { ssid: 'Other', security: 'nopass' } });
      await expect(services.rules.promote(org, bound.slug, other.id)).rejects.toBeInstanceOf(ValidationError);
      expect((await services.rules.list(org, bound.slug)).map((r) => r.id)).toEqual([other.id]);
      expect((await services.nodes.get(org, bound.slug)).payload).toEqual({ ssid: 'Venue', security: 'nopass' });
    });
  });
}

const postgresSkip = needs.postgres();
describe.skipIf(postgresSkip !== null)(`migration 065 on postgres${postgresSkip ? ` (skipped: ${postgresSkip})` : ''}`, () => {
  it('fills the per-rule visitor sets from the scans below the fold watermark (xid, id); the fold adds the rest', async () => {
    const database = await freshPostgresDatabase();
    opened.push({ close: database.drop });
    const before = mkdtempSync(join(tmpdir(), 'waymark-pg-064-'));
    opened.push({ close: async () => rmSync(before, { recursive: true, force: true }) });
    for (const f of readdirSync(postgresMigrationsDir)) if (f < '065') copyFileSync(join(postgresMigrationsDir, f), join(before, f));

    let store = await PostgresStore.open(database.url, { migrationsDir: before, poolSize: 2 });
    const org = await insertOrg(store);
    // Rows only: today's services expect later migrations' tables.
    const node = { id: await seedNode(store, org, { slug: 'AAAAAAAA' }), slug: 'AAAAAAAA' };
    const write = scanWriterFor(store);
    const at = Date.parse('2026-12-07T10:00:00.000Z');
    const s = (i: number, rule_id: string | null, visitor: string, is_bot = 0) => scanOf(node.id, org, { slug: node.slug, ts: at + i, rule_id, visitor_hash: visitor, is_bot });
    const [first] = await write([s(0, 'r1', 'v1'), s(1, 'r1', 'v1'), s(2, null, 'v2'), s(3, 'r1', 'bot', 1)]);
    // A later transaction: its scan has the higher xid, and is not folded yet.
    const [later] = await write([s(4, 'r1', 'v3')]);
    // Folded: every scan of the first transaction. The watermark's id is above the later scan's id
    // (ids are handed out at INSERT and committed in any order), so a backfill by id alone would
    // take that scan in, and the fold would never count it (its key already there).
    await sql`UPDATE scan_rollup_state SET last_xid = (SELECT xid FROM scan_events WHERE id = ${first}), last_event = ${(later as number) + 1} WHERE id = 1`.execute(store.db);
    await store.close();

    store = await PostgresStore.open(database.url, { poolSize: 2 });
    opened.push(store);
    const sets = async () =>
      await store.db.selectFrom('scan_rule_visitor_hours').select(['rule_key', 'visitor_hash']).orderBy('rule_key').orderBy('visitor_hash').execute();
    expect(await sets()).toEqual([
      { rule_key: '', visitor_hash: 'v2' },
      { rule_key: 'r1', visitor_hash: 'v1' },
    ]);
    // caughtUp waits for the fold horizon to pass this scan (transactions of other tests on the cluster hold it back).
    await new ScanAnalytics(store, new ManualClock(at)).caughtUp();
    expect(await sets()).toEqual([
      { rule_key: '', visitor_hash: 'v2' },
      { rule_key: 'r1', visitor_hash: 'v1' },
      { rule_key: 'r1', visitor_hash: 'v3' },
    ]);
  });
});
