/**
 * Where a recorded scan's time goes in SQLite (issue 3, "Performance"): the real ScanWriter
 * (scan_events row + scan_count, one transaction per batch of 50, as the scan handler's group
 * commit), without and with an endpoint subscribed to node.scanned (which adds an outbox row per
 * scan), each at synchronous=FULL and NORMAL; then the same with the per-node index on
 * scan_events that migration 060 took off the hot path (the layout before it, as the
 * baseline), and what the fold that now fills scan_events_by_node (with the roll-ups) costs per
 * scan. 200 nodes, 200 000 scans recorded first so the tables are not trivially small. Prints
 * CPU and wall time per scan (medians of the rounds).
 *
 *   node test/bench/scan-writer.ts   (BENCH_SCANS per variant and round, default 20 000;
 *                                     BENCH_ROUNDS, default 3)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { openDatabase } from '../../server/db/database.ts';
import { ScanWriter, type ScanRecord } from '../../server/features/scans/writer.ts';
import { ScanAnalytics } from '../../server/features/scans/analytics.ts';
import { SqliteStore } from '../../server/db/sqliteStore.ts';
import { ManualClock } from '../../server/platform/clock.ts';
import { subscribeToScans } from '../support/scanSubscriber.ts';

const perRound = Number(process.env.BENCH_SCANS ?? 20_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const batchSize = 50; // at most one scan per connection of the HTTP benchmark's 50

const dir = mkdtempSync(join(tmpdir(), 'waymark-bench-writer-'));
try {
  const db = openDatabase(join(dir, 'waymark.db'));
  const org = randomUUID();
  const now = new Date().toISOString();
  db.prepare('INSERT INTO organizations (id, name, created_at) VALUES (?, ?, ?)').run(org, 'Bench', now);
  const nodes: Array<{ id: string; slug: string }> = [];
  const insertNode = db.prepare(
    `INSERT INTO nodes (id, org_id, slug, label, function_type, payload_json, status, created_at, updated_at)
     VALUES (?, ?, ?, ?, 'redirect', ?, 'active', ?, ?)`,
  );
  db.transaction(() => {
    for (let i = 0; i < 200; i++) {
      const node = { id: randomUUID(), slug: `B${String(i).padStart(7, '0')}` };
      nodes.push(node);
      insertNode.run(node.id, org, node.slug, `Bench ${i}`, JSON.stringify({ url: `https://example.com/${i}` }), now, now);
    }
  })();

  let k = 0;
  const batch = (): ScanRecord[] => {
    const out: ScanRecord[] = [];
    for (let i = 0; i < batchSize; i++) {
      const node = nodes[(k++ * 7919) % nodes.length] as { id: string; slug: string };
      out.push({
        node_id: node.id, org_id: org, slug: node.slug, ts: Date.now(), device_type: 'mobile', os: 'ios', browser: 'Mobile Safari',
        country: 'FR', source: 'qr', rule_id: null, outcome: 'redirect', is_bot: 0, visitor_hash: 'q1w2e3r4t5y6u7i8o9p0aa',
      });
    }
    return out;
  };

  const writer = new ScanWriter(db);
  // The writer adds node.scanned outbox rows only while an endpoint subscribes to them.
  let subscription: string | null = null;
  const subscribe = (on: boolean) => {
    if (on && !subscription) subscription = subscribeToScans(db, org);
    if (!on && subscription) {
      db.prepare('DELETE FROM webhooks WHERE id = ?').run(subscription);
      subscription = null;
    }
  };

  for (let i = 0; i < 200_000 / batchSize; i++) writer.write(batch());
  db.pragma('wal_checkpoint(TRUNCATE)');

  type Variant = { name: string; sync: 'FULL' | 'NORMAL'; subscribed: boolean };
  const measure = (v: Variant): { cpu: number; wall: number } => {
    db.pragma(`synchronous = ${v.sync}`);
    subscribe(v.subscribed);
    const cpu0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < perRound / batchSize; i++) {
      writer.write(batch());
      // the app checkpoints in the background every second; here every 200 batches
      if (i % 200 === 199) db.pragma('wal_checkpoint(PASSIVE)');
    }
    const wall = Number(process.hrtime.bigint() - t0) / 1000 / perRound;
    const c = process.cpuUsage(cpu0);
    db.pragma('wal_checkpoint(TRUNCATE)');
    return { cpu: (c.user + c.system) / perRound, wall };
  };
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const run = (variants: Variant[]) => {
    const results = new Map<string, Array<{ cpu: number; wall: number }>>();
    for (let r = 0; r < rounds; r++) for (const v of variants) results.set(v.name, [...(results.get(v.name) ?? []), measure(v)]);
    for (const v of variants) {
      const rs = results.get(v.name) ?? [];
      console.log(
        `${v.name.padEnd(60)} CPU ${median(rs.map((x) => x.cpu)).toFixed(1).padStart(5)} µs/scan   wall ${median(rs.map((x) => x.wall)).toFixed(1).padStart(6)} µs/scan`,
      );
    }
  };
  const variants = (suffix: string): Variant[] => [
    { name: `ScanWriter, no node.scanned subscriber, FULL${suffix}`, sync: 'FULL', subscribed: false },
    { name: `ScanWriter, no subscriber, NORMAL${suffix}`, sync: 'NORMAL', subscribed: false },
    { name: `ScanWriter, node.scanned subscribed (+ outbox row), FULL${suffix}`, sync: 'FULL', subscribed: true },
    { name: `ScanWriter, subscribed, NORMAL${suffix}`, sync: 'NORMAL', subscribed: true },
  ];

  console.log(`scan writer: batches of ${batchSize}, ${perRound} scans per variant and round, ${rounds} rounds (medians), 200 nodes, 200 000 scans before`);
  run(variants(''));
  // The deferred part: folding what was recorded (roll-ups + per-node order), per scan.
  const analytics = new ScanAnalytics(new SqliteStore(db), new ManualClock(Date.now()));
  const pending = db.prepare('SELECT COUNT(*) FROM scan_events WHERE id > (SELECT last_event FROM scan_rollup_state)').pluck().get() as number;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await analytics.catchUp();
  const foldWall = Number(process.hrtime.bigint() - t0) / 1000 / pending;
  const fc = process.cpuUsage(cpu0);
  console.log(`${'fold (roll-ups + per-node order), FULL, later'.padEnd(60)} CPU ${((fc.user + fc.system) / pending).toFixed(1).padStart(5)} µs/scan   wall ${foldWall.toFixed(1).padStart(6)} µs/scan   (${pending} scans)`);
  db.exec('CREATE INDEX scan_events_node_time ON scan_events(node_id, ts DESC, id DESC)');
  run(variants(', + node index (before 060)'));
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
