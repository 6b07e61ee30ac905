/**
 * A large organization (issue 19, "Performance"), on SQLite and on PostgreSQL in the same run:
 * BENCH_ORG_NODES (default 1,000,000) nodes in one organization and BENCH_ORG_SCANS (default
 * 1,000,000) scans over the last 90 days on BENCH_ORG_SCANNED of its nodes (default 100; one
 * node holds a tenth of them), seeded with bulk SQL and folded into the roll-ups (the fold's time
 * printed), then timed through the real `waymark serve` over keep-alive HTTP on loopback:
 *   - GET /v1/nodes (first page of 50, with its total; a page 10,000 deep; status filter)
 *     (target < 20 ms);
 *   - GET /v1/analytics (organization, 90 days by day and by week, top 10 nodes) (target
 *     < 100 ms); GET /v1/nodes/{slug}/analytics of the busiest node over the same 90 days;
 * beside baselines in the same server: the same requests for a small organization (1,000 nodes,
 * 10,000 scans on 10 of them) and GET /healthz (the HTTP floor). Each answer is checked against
 * the seeded data (the listing's total, the analytics' human scans) and the unique visitors checked
 * equal to the raw scans' distinct (day, key) pairs; the fold's rate in the background fold's chunks
 * is printed against the 5,000 scans/s it must keep up with. Medians of 15 requests after 3 warm-ups, and the 90th percentile.
 *
 *   node test/bench/org-scale.ts   (WAYMARK_TEST_DATABASE for the PostgreSQL rows)
 */
import { sql } from 'kysely';
import { foldChunkSize } from '../../server/features/scans/analytics.ts';
import { AnalyticsRepo } from '../../server/features/scans/analyticsRepo.ts';
import { type Backend, backends, bulk, type Instance, machineLoad, openInstance, seedNodes, series, timeGet, uuidOf } from './_instance.ts';

const NODES = Number(process.env.BENCH_ORG_NODES ?? 1_000_000);
const SCANS = Number(process.env.BENCH_ORG_SCANS ?? 1_000_000);
const SCANNED = Number(process.env.BENCH_ORG_SCANNED ?? 100);
const SMALL_NODES = 1000;
const SMALL_SCANS = 10_000;
const SMALL_SCANNED = 10;
/** Events folded in the background fold's chunks (500 on SQLite, 5,000 on PostgreSQL), timed against 5,000 scans/s. */
const FOLD_MEASURED = Number(process.env.BENCH_ORG_FOLD_MEASURED ?? 50_000);
const FOLD_TARGET = 5000;
const DAY = 86_400_000;
const end = Math.floor(Date.now() / DAY) * DAY; // today, 00:00 UTC
const start = end - 90 * DAY;

/** `count` scans spread evenly over the 90 days on nodes 0 … scanned-1 (node 0 holds a tenth). */
async function seedScans(instance: Instance, orgId: string, kind: number, count: number, scanned: number): Promise<void> {
  const b = instance.backend;
  const lit = sql.lit;
  // Every tenth scan is node 0's, the rest go round the others.
  const nodeIndex = sql`CASE WHEN g.i % 10 = 0 THEN 0 ELSE 1 + (g.i % ${lit(Math.max(1, scanned - 1))}) END`;
  const ts = sql`${lit(start)} + (g.i * ${lit(end - start)}) / ${lit(count)}`;
  const text = (e: ReturnType<typeof sql>) => (b === 'postgres' ? sql`(${e})::text` : sql`(${e})`);
  await bulk(instance, async (tx) => {
    await sql`INSERT INTO scan_events (node_id, org_id, ts, device_type, os, browser, country, source, rule_id, outcome, is_bot, visitor_hash)
      SELECT ${uuidOf(b, kind, nodeIndex)}, ${orgId}, ${ts},
        CASE g.i % 5 WHEN 3 THEN 'tablet' WHEN 4 THEN 'desktop' ELSE 'mobile' END,
        CASE (g.i / 2) % 5 WHEN 0 THEN 'ios' WHEN 3 THEN 'windows' WHEN 4 THEN 'macos' ELSE 'android' END,
        'Chrome',
        CASE g.i % 6 WHEN 0 THEN 'FR' WHEN 1 THEN 'DE' WHEN 2 THEN 'GB' WHEN 3 THEN 'US' WHEN 4 THEN 'BE' ELSE NULL END,
        CASE WHEN g.i % 7 = 0 THEN 'nfc_unverified' ELSE 'qr' END, NULL, 'redirect',
        CASE WHEN g.i % 97 = 0 THEN 1 ELSE 0 END,
        'v' || ${text(sql`g.i % 20000`)} || '-' || ${text(sql`(${ts}) / ${lit(DAY)}`)}
      FROM ${series(b, count)} AS g`.execute(tx);
  });
}

async function seed(instance: Instance, label: string, nodes: number, scans: number, scanned: number, kind: number, prefix: string) {
  const { orgId, key } = await instance.organization(label);
  let t = performance.now();
  await bulk(instance, async (tx) => {
    await seedNodes(instance, tx, orgId, nodes, { kind, prefix, createdFrom: start });
    // PostgreSQL's bulk load runs with the triggers off (session_replication_role): add what the
    // node_counts triggers would have (migration 080). SQLite's keeps them on.
    if (instance.backend === 'postgres') {
      await sql`INSERT INTO node_counts (org_id, status, function_type, nodes)
        SELECT org_id, status, function_type, count(*) FROM nodes WHERE org_id = ${orgId} GROUP BY org_id, status, function_type`.execute(tx);
    }
  });
  const nodesMs = performance.now() - t;
  t = performance.now();
  await seedScans(instance, orgId, kind, scans, scanned);
  const scansMs = performance.now() - t;
  return { orgId, key, nodesMs, scansMs, busiest: `${prefix}0000000` };
}

/**
 * Folds every seeded scan with the product's code: the first FOLD_MEASURED events in the background
 * fold's chunks (foldChunkSize: 500 on SQLite, 5,000 on PostgreSQL; its rate is what must keep up with 5,000 scans/s), the rest in chunks of
 * 100,000.
 */
async function foldAll(instance: Instance): Promise<{ ms: number; events: number; measured: { events: number; ms: number; chunk: number } }> {
  const repo = new AnalyticsRepo(instance.opened.store.dialect);
  const store = instance.opened.store;
  const chunk = foldChunkSize(store.dialect);
  let t = performance.now();
  let measuredEvents = 0;
  for (;;) {
    const { read } = await store.transaction((tx) => repo.fold(tx, chunk));
    measuredEvents += read;
    if (read < chunk || measuredEvents >= FOLD_MEASURED) break;
  }
  const measured = { events: measuredEvents, ms: performance.now() - t };
  t = performance.now();
  let events = measuredEvents;
  for (;;) {
    const { read } = await store.transaction((tx) => repo.fold(tx, 100_000));
    events += read;
    if (read < 100_000) break;
  }
  if (instance.backend === 'postgres') await sql`VACUUM ANALYZE`.execute(store.db);
  else instance.opened.sqlite!.exec('ANALYZE');
  return { ms: measured.ms + performance.now() - t, events, measured: { ...measured, chunk } };
}

/** The organization's (or a node's) unique visitors from the raw scans: distinct (day, key) pairs of human scans in the 90 days. */
async function rawVisitors(instance: Instance, column: 'org_id' | 'node_id', id: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*) AS n FROM (SELECT DISTINCT ts / ${sql.lit(DAY)} AS day, visitor_hash FROM scan_events
    WHERE ${sql.ref(column)} = ${id} AND is_bot = 0 AND ts >= ${sql.lit(start)} AND ts < ${sql.lit(end)}) k`.execute(instance.opened.store.db);
  return Number(rows[0]!.n);
}

/** The plans of the listing's queries (its page, its total) and of an organization's breakdown and unique visitors, on the seeded data. */
async function printPlans(instance: Instance, orgId: string): Promise<void> {
  const queries = [
    `SELECT id FROM nodes WHERE org_id = '${orgId}' ORDER BY created_at DESC, rowid DESC LIMIT 50`,
    `SELECT id FROM nodes WHERE org_id = '${orgId}' AND status = 'active' ORDER BY created_at DESC, rowid DESC LIMIT 50`,
    `SELECT sum(nodes) FROM node_counts WHERE org_id = '${orgId}'`,
    `SELECT sum(visitors) FROM scan_org_days WHERE org_id = '${orgId}' AND day >= 0`,
    `SELECT value, sum(scans) FROM scan_org_rollups WHERE org_id = '${orgId}' AND dim = 'os' AND hour >= 0 GROUP BY value`,
  ];
  console.log(`  plans (${instance.backend}):`);
  for (const q of queries) {
    const explain = instance.backend === 'postgres' ? sql`EXPLAIN (ANALYZE, BUFFERS) ${sql.raw(q)}` : sql`EXPLAIN QUERY PLAN ${sql.raw(q)}`;
    const { rows } = await explain.execute(instance.opened.store.db);
    const lines = (rows as Array<Record<string, string>>).map((r) => r['QUERY PLAN'] ?? r.detail ?? JSON.stringify(r));
    console.log(`    ${q.replace(orgId, '…')}\n      ${lines.join('\n      ')}`);
  }
}

const fmt = (r: { median: number; p90: number }) => `median ${r.median.toFixed(1).padStart(7)} ms  p90 ${r.p90.toFixed(1).padStart(7)} ms`;
const range = `from=${new Date(start).toISOString()}&to=${new Date(end).toISOString()}`;

async function measure(backend: Backend): Promise<boolean> {
  const instance = await openInstance(backend);
  let ok = true;
  try {
    const big = await seed(instance, 'Big', NODES, SCANS, SCANNED, 1, 'B');
    const small = await seed(instance, 'Small', SMALL_NODES, SMALL_SCANS, SMALL_SCANNED, 2, 'C');
    const fold = await foldAll(instance);
    console.log(
      `\n${backend}: seeded ${NODES} nodes in ${(big.nodesMs / 1000).toFixed(1)} s and ${SCANS} scans (90 days, ${SCANNED} nodes) in ${(big.scansMs / 1000).toFixed(1)} s; folded ${fold.events} events in ${(fold.ms / 1000).toFixed(1)} s (${((fold.events / fold.ms) * 1000).toFixed(0)} events/s, chunks of 100,000)`,
    );
    const foldRate = (fold.measured.events / fold.measured.ms) * 1000;
    console.log(
      `  fold in the background fold's chunks of ${fold.measured.chunk}: ${fold.measured.events} events in ${(fold.measured.ms / 1000).toFixed(1)} s, ${foldRate.toFixed(0)} events/s (target >= ${FOLD_TARGET} scans/s sustained: ${foldRate >= FOLD_TARGET ? 'met' : 'MISSED'})`,
    );
    if (foldRate < FOLD_TARGET) ok = false;
    // Unique visitors checked equal to the raw scans' distinct (day, key) pairs (migration 081).
    const busiestId = await instance.opened.store.db.selectFrom('nodes').select('id').where('slug', '=', big.busiest).executeTakeFirstOrThrow();
    const expectedVisitors = { org: await rawVisitors(instance, 'org_id', big.orgId), node: await rawVisitors(instance, 'node_id', busiestId.id) };
    const server = await instance.serve();
    const rows: Array<[string, string, string | null, number | null]> = [
      ['GET /healthz (HTTP floor)', '/healthz', null, null],
      ['nodes, first page of 50 + total', '/v1/nodes?limit=50', 'nodes', 20],
      ['nodes, page at offset 10,000', '/v1/nodes?limit=50&offset=10000', 'nodes', null],
      ['nodes, status=active, first page', '/v1/nodes?limit=50&status=active', 'nodes', 20],
      ['org analytics, 90 days by day', `/v1/analytics?${range}&interval=day`, 'org', 100],
      ['org analytics, 90 days by week', `/v1/analytics?${range}&interval=week`, 'org', 100],
      ['busiest node analytics, 90 days by day', `/v1/nodes/{slug}/analytics?${range}&interval=day`, 'node', null],
    ];
    console.log(`${backend}, ${await machineLoad()}; each row: the large organization | the small one (baseline), same server`);
    for (const [name, path, kind, target] of rows) {
      const bigRun = await timeGet(server.url, path.replace('{slug}', big.busiest), kind ? big.key : null);
      const smallRun = kind ? await timeGet(server.url, path.replace('{slug}', small.busiest), small.key) : null;
      // The answers are the seeded data: totals match what was seeded.
      if (kind === 'nodes') {
        const total = (bigRun.body as { total: number }).total;
        if (total !== NODES || (smallRun!.body as { total: number }).total !== SMALL_NODES) throw new Error(`${name}: total ${total}, expected ${NODES}`);
      }
      if (kind === 'org') {
        const totals = (bigRun.body as { data: { totals: { scans: number } } }).data.totals.scans;
        const human = SCANS - Math.ceil(SCANS / 97);
        if (totals !== human) throw new Error(`${name}: ${totals} human scans, expected ${human}`);
      }
      if (kind === 'org' || kind === 'node') {
        const visitors = (bigRun.body as { data: { totals: { unique_visitors: number } } }).data.totals.unique_visitors;
        if (visitors !== expectedVisitors[kind]) throw new Error(`${name}: ${visitors} unique visitors, the raw scans have ${expectedVisitors[kind]}`);
      }
      const verdict = target === null ? '' : bigRun.median < target ? `  (target < ${target} ms: met)` : `  (target < ${target} ms: MISSED)`;
      if (target !== null && bigRun.median >= target) ok = false;
      console.log(`  ${name.padEnd(40)} ${fmt(bigRun)}${smallRun ? `   | small org ${fmt(smallRun)}` : ''}${verdict}`);
    }
    await server.stop();
    await printPlans(instance, big.orgId);
  } finally {
    await instance.close();
  }
  return ok;
}

console.log(`org-scale: ${NODES} nodes and ${SCANS} scans over 90 days in one organization (${SCANNED} of its nodes scanned), beside an organization of ${SMALL_NODES} nodes / ${SMALL_SCANS} scans`);
let allMet = true;
for (const backend of backends()) allMet = (await measure(backend)) && allMet;
console.log(allMet ? '\nall targets met' : '\nsome targets MISSED (see above)');
