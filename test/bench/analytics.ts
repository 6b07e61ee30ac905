/**
 * Analytics at scale: seeds one node with BENCH_SCANS (default 1,000,000) scan events over 90
 * days, and 49 other nodes of the organization with a quarter as many between them, folds the
 * roll-ups, then times the analytics queries. The baseline computes the same node figures (the
 * 90-days-by-day answer: totals, daily series, breakdowns) straight from the raw scans, and the
 * two answers are checked equal before either time is printed. Prints the query plans.
 *
 *   node test/bench/analytics.ts
 */
import { deepStrictEqual } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { openDatabase } from '../../server/db/database.ts';
import { ManualClock } from '../../server/platform/clock.ts';
import { ScanAnalytics } from '../../server/features/scans/analytics.ts';
import { SqliteStore } from '../../server/db/sqliteStore.ts';

const total = Number(process.env.BENCH_SCANS ?? 1_000_000);
const dir = mkdtempSync(join(tmpdir(), 'waymark-analytics-'));
const db = openDatabase(join(dir, 'a.sqlite'), { synchronous: 'normal' });
const end = Date.parse('2026-11-21T00:00:00Z');
const start = end - 90 * 24 * 3_600_000;

function time<T>(fn: () => T): { ms: number; value: T } {
  const t = performance.now();
  const value = fn();
  return { ms: performance.now() - t, value };
}

async function timeAsync(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

try {
  const org = randomUUID();
  db.prepare('INSERT INTO organizations (id, name, created_at) VALUES (?, ?, ?)').run(org, 'Bench', new Date(start).toISOString());
  const nodes: string[] = [];
  const insNode = db.prepare(
    `INSERT INTO nodes (id, org_id, slug, label, function_type, payload_json, status, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'redirect', '{"url":"https://example.com"}', 'active', ?, ?)`,
  );
  for (let i = 0; i < 50; i++) {
    const id = randomUUID();
    nodes.push(id);
    insNode.run(id, org, `B${String(i).padStart(7, '0')}`, `Node ${i}`, new Date(start).toISOString(), new Date(start).toISOString());
  }
  const devices = ['mobile', 'mobile', 'mobile', 'tablet', 'desktop'];
  const oses = ['ios', 'android', 'android', 'windows', 'macos'];
  const countries = ['FR', 'DE', 'GB', 'US', 'BE', null];
  const ins = db.prepare(
    `INSERT INTO scan_events (node_id, org_id, ts, device_type, os, browser, country, source, rule_id, outcome, is_bot, visitor_hash)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, 'redirect', ?, ?)`,
  );
  const others = Math.floor(total / 4);
  const seed = time(() =>
    db.transaction(() => {
      // Interleaved in time, as real scans arrive: the hot node's, then every fourth one another node's.
      for (let i = 0, o = 0; i < total; i++) {
        const ts = start + Math.floor((i / total) * (end - start));
        const row = (node: string, k: number) =>
          ins.run(node, org, ts, devices[k % 5], oses[(k >> 1) % 5], 'Chrome', countries[k % 6], k % 7 === 0 ? 'nfc_unverified' : 'qr', k % 97 === 0 ? 1 : 0, `v${k % 20000}-${Math.floor(ts / 86_400_000)}`);
        row(nodes[0] as string, i);
        if (i % 4 === 3 && o < others) row(nodes[1 + (o % 49)] as string, total + o++);
      }
    })(),
  );
  const perNode = db.prepare('SELECT count(*) FROM scan_events WHERE node_id = ?').pluck();
  const hotScans = perNode.get(nodes[0]) as number;
  const allScans = db.prepare('SELECT count(*) FROM scan_events').pluck().get() as number;
  console.log(`seeded ${allScans} scan events in ${(seed.ms / 1000).toFixed(1)} s: ${hotScans} on the measured node over 90 days, ${allScans - hotScans} on 49 others`);

  const analytics = new ScanAnalytics(new SqliteStore(db), new ManualClock(end));
  const foldMs = await timeAsync(() => analytics.catchUp());
  console.log(`folded into roll-ups in ${(foldMs / 1000).toFixed(1)} s (${((total / foldMs) * 1000).toFixed(0)} events/s)`);

  const hot = { id: nodes[0] as string, slug: 'B0000000' };
  const cases: Array<[string, () => Promise<unknown>]> = [
    ['node analytics, 90 days by day', () => analytics.forNode(hot, { from: new Date(start).toISOString(), to: new Date(end).toISOString(), interval: 'day' })],
    ['node analytics, 7 days by hour', () => analytics.forNode(hot, { from: new Date(end - 7 * 86_400_000).toISOString(), to: new Date(end).toISOString(), interval: 'hour' })],
    ['org analytics, 90 days by week', () => analytics.forOrg(org, { from: new Date(start).toISOString(), to: new Date(end).toISOString(), interval: 'week' })],
    ['scan list, page 1 (50)', () => analytics.listScans(hot.id, { limit: 50, offset: 0 })],
  ];
  for (const [name, fn] of cases) {
    await fn(); // warm the page cache
    const runs: number[] = [];
    for (let i = 0; i < 5; i++) runs.push(await timeAsync(fn));
    runs.sort((a, b) => a - b);
    console.log(`${name.padEnd(34)} median ${(runs[2] as number).toFixed(1).padStart(7)} ms`);
  }

  // Baseline: the figures of "node analytics, 90 days by day" straight from the node's raw scans
  // (found through scan_events_by_node, the per-node order the fold keeps). Unique visitors are
  // counted per day, as the API does (a visitor key is per day).
  const DAY = 86_400_000;
  const naive = () => {
    const raw = 'FROM scan_events_by_node i JOIN scan_events e ON e.id = i.id WHERE i.node_id = ? AND i.ts >= ? AND i.ts < ? AND e.is_bot = 0';
    const q = <T>(sql: string) => db.prepare(sql).all(hot.id, start, end) as T[];
    const totals = db.prepare(`SELECT count(*) AS scans ${raw}`).get(hot.id, start, end) as { scans: number };
    const uniqueVisitors = db.prepare(`SELECT count(*) FROM (SELECT DISTINCT e.ts / ${DAY} AS d, e.visitor_hash ${raw})`).pluck().get(hot.id, start, end) as number;
    const scansByDay = new Map(q<{ d: number; n: number }>(`SELECT e.ts / ${DAY} AS d, count(*) AS n ${raw} GROUP BY d`).map((r) => [r.d, r.n]));
    const visitorsByDay = new Map(q<{ d: number; n: number }>(`SELECT d, count(*) AS n FROM (SELECT DISTINCT e.ts / ${DAY} AS d, e.visitor_hash ${raw}) GROUP BY d`).map((r) => [r.d, r.n]));
    const series = [];
    for (let d = start / DAY; d < end / DAY; d++) {
      series.push({ start: new Date(d * DAY).toISOString(), scans: scansByDay.get(d) ?? 0, unique_visitors: visitorsByDay.get(d) ?? 0 });
    }
    const breakdowns: Record<string, Array<{ value: string | null; scans: number }>> = {};
    for (const [dim, column] of [['device_type', 'device_type'], ['os', 'os'], ['browser', 'browser'], ['country', 'country'], ['source', 'source'], ['rule', 'rule_id'], ['outcome', 'outcome']] as const) {
      breakdowns[dim] = q<{ value: string; scans: number }>(
        `SELECT coalesce(e.${column}, '') AS value, count(*) AS scans ${raw} GROUP BY value ORDER BY scans DESC, value`,
      ).map((r) => ({ value: r.value === '' ? null : r.value, scans: r.scans }));
    }
    return { totals: { scans: totals.scans, unique_visitors: uniqueVisitors }, series, breakdowns };
  };
  const fast = await analytics.forNode(hot, { from: new Date(start).toISOString(), to: new Date(end).toISOString(), interval: 'day' });
  const slow = naive();
  deepStrictEqual({ totals: fast.totals, series: fast.series, breakdowns: fast.breakdowns }, slow, 'the baseline must compute the same figures');
  console.log(`same figures from both (checked equal): ${slow.totals.scans} human scans, ${slow.totals.unique_visitors} visitor-days, ${slow.series.length} days`);
  const naiveRuns = Array.from({ length: 3 }, () => time(naive).ms).sort((a, b) => a - b);
  console.log(`${'baseline: same node figures from raw scans'.padEnd(34)} median ${(naiveRuns[1] as number).toFixed(1).padStart(7)} ms`);

  console.log('query plans:');
  for (const sql of [
    "SELECT sum(scans) FROM scan_rollups WHERE node_id = 'x' AND hour >= 0 AND hour < 10 AND dim = 'os' GROUP BY value",
    "SELECT sum(scans) FROM scan_org_rollups WHERE org_id = 'x' AND hour >= 0 AND hour < 10 AND dim = 'os' GROUP BY value",
    "SELECT node_id, sum(scans) FROM scan_node_days WHERE org_id = 'x' AND day >= 0 AND day < 10 GROUP BY node_id",
    "SELECT count(DISTINCT visitor_hash) FROM scan_visitor_hours WHERE org_id = 'x' AND hour >= 0 AND hour < 10",
    "SELECT e.* FROM scan_events_by_node i JOIN scan_events e ON e.id = i.id WHERE i.node_id = 'x' AND i.ts >= 0 AND i.ts < 10 AND e.is_bot = 0 ORDER BY i.ts DESC, i.id DESC LIMIT 50",
  ]) {
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((r) => r.detail).join('; ');
    console.log(`  ${plan}`);
  }
} finally {
  db.close();
  rmSync(dir, { recursive: true, force: true });
}
