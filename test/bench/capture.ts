/**
 * Cost of change capture (migration 055's triggers) on the write path. The same writes run on two
 * fresh databases in the same run: one as shipped, and a baseline with the sync triggers dropped.
 * Node inserts in transactions of 100 (as the batch generator writes), then a one-field edit of
 * every node, each in its own transaction (synchronous=FULL, WAL: as served).
 *
 *   node test/bench/capture.ts   (BENCH_NODES, default 5000; BENCH_ROUNDS, default 3, best kept)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from 'better-sqlite3';
import { openDatabase } from '../../server/db/database.ts';

const count = Number(process.env.BENCH_NODES ?? 5000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
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

function run(db: Database): { insertMs: number; editMs: number } {
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
  return { insertMs, editMs: performance.now() - t };
}

const best = { base: { insertMs: Infinity, editMs: Infinity }, capture: { insertMs: Infinity, editMs: Infinity } };
for (let r = 0; r < rounds; r++) {
  for (const kind of ['base', 'capture'] as const) {
    const dir = mkdtempSync(join(tmpdir(), 'waymark-bench-capture-'));
    try {
      const db = fresh(dir, kind, kind === 'capture');
      const m = run(db);
      db.close();
      best[kind].insertMs = Math.min(best[kind].insertMs, m.insertMs);
      best[kind].editMs = Math.min(best[kind].editMs, m.editMs);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
const per = (ms: number, n: number) => `${((ms * 1000) / n).toFixed(1)} µs/row`;
console.log(`change capture: ${count} nodes, best of ${rounds} alternating rounds`);
console.log(`insert (tx of 100)   baseline ${per(best.base.insertMs, count)}   with capture ${per(best.capture.insertMs, count)}   ×${(best.capture.insertMs / best.base.insertMs).toFixed(2)}`);
console.log(`edit (tx each)       baseline ${per(best.base.editMs, count)}   with capture ${per(best.capture.editMs, count)}   ×${(best.capture.editMs / best.base.editMs).toFixed(2)}`);
