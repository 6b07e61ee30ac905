/**
 * Cost of change capture (migration 055's triggers) on the write path. The same writes run on two
 * fresh databases in the same run: one as shipped, and a baseline with the sync triggers dropped.
 * Node inserts in transactions of 100 (as the batch generator writes), then a one-field edit of
 * every node, each in its own transaction (synchronous=FULL, WAL: as served); then the scan path:
 * the real ScanWriter recording BENCH_SCAN_WRITES scans in batches of 50 (the scan handler's group
 * commit) on those nodes, timed, with the sync change-log rows it wrote counted (the claim "no
 * change on the scan path" is this row: its ratio and its count of captured changes).
 *
 *   node test/bench/capture.ts   (BENCH_NODES, default 5000; BENCH_SCAN_WRITES, default 20 000;
 *                                 BENCH_ROUNDS, default 3, best kept)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { openDatabase } from '../../server/db/database.ts';
import { ScanWriter, type ScanRecord } from '../../server/features/scans/writer.ts';

const count = Number(process.env.BENCH_NODES ?? 5000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const scanWrites = Number(process.env.BENCH_SCAN_WRITES ?? 20_000);
const at = '2026-11-21T12:00:00.000Z';

function fresh(dir: string, name: string, capture: boolean): Database {
  const db = openDatabase(join(dir, `${name}.sqlite`));
  if (!capture) {
    const triggers = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'trigger' AND name LIKE 'sync_%'").pluck().all() as string[];
    for (const t of triggers) db.exec(`DROP TRIGGER ${t}`);
  }
  db.prepare("INSERT INTO organizations (id, name, created_at) VALUES ('org', 'Org', ?)").run(at);
  return db;
}

interface Timings {
  insertMs: number;
  editMs: number;
  scanMs: number;
  /** sync_outbox rows (captured changes) written while recording the scans. */
  scanCaptured: number;
}

function run(db: Database): Timings {
  const insert = db.prepare(
    `INSERT INTO nodes (id, org_id, slug, label, function_type, payload_json, status, serial, serial_number, created_at, updated_at)
     VALUES (?, 'org', ?, ?, 'redirect', '{"url":"https://example.com/x"}', 'active', ?, ?, ?, ?)`,
  );
  const edit = db.prepare('UPDATE nodes SET label = ?, updated_at = ? WHERE id = ?');
  const chunk = db.transaction((from: number) => {
    for (let i = from; i < Math.min(count, from + 100); i++) insert.run(`n${i}`, `S${i}`, `label ${i}`, `H-${i}`, i, at, at);
  });
  let t = performance.now();
  for (let i = 0; i < count; i += 100) chunk(i);
  const insertMs = performance.now() - t;
  t = performance.now();
  for (let i = 0; i < count; i++) edit.run(`edited ${i}`, at, `n${i}`);
  const editMs = performance.now() - t;

  const writer = new ScanWriter(db);
  const captured = db.prepare('SELECT count(*) FROM sync_outbox').pluck();
  const capturedBefore = captured.get() as number;
  const scan = (i: number): ScanRecord => ({
    node_id: `n${(i * 7919) % count}`, org_id: 'org', slug: `S${(i * 7919) % count}`, ts: Date.parse(at) + i, device_type: 'mobile', os: 'ios',
    browser: 'Mobile Safari', country: 'FR', source: 'qr', rule_id: null, outcome: 'redirect', is_bot: 0, visitor_hash: `v${i % 1000}`,
  });
  t = performance.now();
  for (let i = 0; i < scanWrites; i += 50) writer.write(Array.from({ length: Math.min(50, scanWrites - i) }, (_, j) => scan(i + j)));
  const scanMs = performance.now() - t;
  const recorded = db.prepare('SELECT count(*) FROM scan_events').pluck().get() as number;
  if (recorded !== scanWrites) throw new Error(`recorded ${recorded} scans, not ${scanWrites}`);
  return { insertMs, editMs, scanMs, scanCaptured: (captured.get() as number) - capturedBefore };
}

const none = (): Timings => ({ insertMs: Infinity, editMs: Infinity, scanMs: Infinity, scanCaptured: 0 });
const best = { base: none(), capture: none() };
for (let r = 0; r < rounds; r++) {
  for (const kind of ['base', 'capture'] as const) {
    const dir = mkdtempSync(join(tmpdir(), 'waymark-bench-capture-'));
    try {
      const db = fresh(dir, kind, kind === 'capture');
      const m = run(db);
      db.close();
      best[kind].insertMs = Math.min(best[kind].insertMs, m.insertMs);
      best[kind].editMs = Math.min(best[kind].editMs, m.editMs);
      best[kind].scanMs = Math.min(best[kind].scanMs, m.scanMs);
      best[kind].scanCaptured = Math.max(best[kind].scanCaptured, m.scanCaptured);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
const per = (ms: number, n: number) => `${((ms * 1000) / n).toFixed(1)} µs/row`;
console.log(`change capture: ${count} nodes, best of ${rounds} alternating rounds`);
console.log(`insert (tx of 100)   baseline ${per(best.base.insertMs, count)}   with capture ${per(best.capture.insertMs, count)}   ×${(best.capture.insertMs / best.base.insertMs).toFixed(2)}`);
console.log(`edit (tx each)       baseline ${per(best.base.editMs, count)}   with capture ${per(best.capture.editMs, count)}   ×${(best.capture.editMs / best.base.editMs).toFixed(2)}`);
console.log(
  `scan path (ScanWriter, batches of 50, ${scanWrites} scans)   baseline ${per(best.base.scanMs, scanWrites)}   with capture ${per(best.capture.scanMs, scanWrites)}   ×${(best.capture.scanMs / best.base.scanMs).toFixed(2)}   captured changes written by scans: ${best.capture.scanCaptured}`,
);
