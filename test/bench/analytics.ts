/**
 * Analytics at scale: seeds BENCH_SCANS (default 1,000,000) scan events over 90 days on 50 nodes
 * (one node gets half of them), folds the roll-ups, then times the analytics queries beside the
 * same figures computed the naive way (GROUP BY over scan_events), and prints the query plans.
 *
 *   node test/bench/analytics.ts
 */
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
  const seed = time(() =>
    db.transaction(() => {
      for (let i = 0; i < total; i++) {
        const node = i % 2 === 0 ? (nodes[0] as string) : (nodes[i % 50] as string);
        const ts = start + Math.floor((i / total) * (end - start));
        ins.run(node, org, ts, devices[i % 5], oses[(i >> 1) % 5], 'Chrome', countries[i % 6], i % 7 === 0 ? 'nfc' : 'qr', i % 97 === 0 ? 1 : 0, `v${i % 20000}-${Math.floor(ts / 86_400_000)}`);
      }
    })(),
  );
  console.log(`seeded ${total} scan events in ${(seed.ms / 1000).toFixed(1)} s`);

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

  // Baseline: the same node figures straight from the node's raw scans (found through
  // scan_events_by_node, the per-node order the fold keeps).
  const naive = () => {
    const raw = 'FROM scan_events_by_node i JOIN scan_events e ON e.id = i.id WHERE i.node_id = ? AND i.ts >= ? AND i.ts < ? AND e.is_bot = 0';
    const q = (sql: string) => db.prepare(sql).all(hot.id, start, end);
    q(`SELECT count(*), count(DISTINCT e.visitor_hash) ${raw}`);
    q(`SELECT e.ts / 86400000 AS d, count(*) ${raw} GROUP BY d`);
    for (const dim of ['device_type', 'os', 'browser', 'country', 'source', 'rule_id', 'outcome']) {
      q(`SELECT e.${dim}, count(*) ${raw} GROUP BY e.${dim}`);
    }
  };
  naive();
  const naiveRuns = Array.from({ length: 3 }, () => time(naive).ms).sort((a, b) => a - b);
  console.log(`${'baseline: same node figures from raw scans'.padEnd(34)} median ${(naiveRuns[1] as number).toFixed(1).padStart(7)} ms`);

  console.log('query plans:');
  for (const sql of [
    "SELECT sum(scans) FROM scan_rollups WHERE node_id = 'x' AND hour >= 0 AND hour < 10 AND dim = 'os' GROUP BY value",
    "SELECT sum(scans) FROM scan_rollups WHERE org_id = 'x' AND hour >= 0 AND hour < 10 AND dim = '' GROUP BY node_id",
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
