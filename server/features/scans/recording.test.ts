import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Database } from 'better-sqlite3';
import { openDatabase } from '../../db/database.ts';
import { defaultMigrationsDir } from '../../db/migrate.ts';
import { ManualClock } from '../../platform/clock.ts';
import { SqliteStore } from '../../db/sqliteStore.ts';
import type { Executor } from '../../db/store.ts';
import { ScanAnalytics } from './analytics.ts';
import { ScanWriter, type ScanRecord } from './writer.ts';
import { subscribeToScans } from '../../../test/support/scanSubscriber.ts';

/*
 * Recording against the storage layout of migration 060: scan_events is append-only (no per-node
 * index, no foreign key); the fold fills scan_events_by_node; node deletion removes a node's
 * scans, folded or not; ids are never handed out twice.
 */

const T0 = Date.parse('2026-11-21T12:00:00.000Z');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-recording-'));
  dirs.push(dir);
  const db = openDatabase(join(dir, 'waymark.db'));
  db.prepare("INSERT INTO organizations (id, name, created_at) VALUES ('org', 'Org', ?)").run(new Date(T0).toISOString());
  const writer = new ScanWriter(db);
  const analytics = new ScanAnalytics(new SqliteStore(db), new ManualClock(T0 + 3_600_000));
  return { db, writer, analytics };
}

function addNode(db: Database, id: string, slug: string): void {
  const at = new Date(T0).toISOString();
  db.prepare(
    `INSERT INTO slugs (slug, org_id, node_id, minted_at) VALUES (?, 'org', ?, ?)`,
  ).run(slug, id, at);
  db.prepare(
    `INSERT INTO nodes (id, org_id, slug, label, function_type, payload_json, status, created_at, updated_at)
     VALUES (?, 'org', ?, ?, 'redirect', '{"url":"https://example.com"}', 'active', ?, ?)`,
  ).run(id, slug, id, at, at);
}

let k = 0;
function scan(nodeId: string, over: Partial<ScanRecord> = {}): ScanRecord {
  return {
    node_id: nodeId, org_id: 'org', slug: 'AAAAAAAA', ts: T0 + ++k * 1000, device_type: 'mobile', os: 'ios', browser: 'Mobile Safari',
    country: 'FR', source: 'qr', rule_id: null, outcome: 'redirect', is_bot: 0, visitor_hash: `v${k}`, ...over,
  };
}

async function pagesOf<T>(pages: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const page of pages) out.push(page);
  return out;
}

const rowsOf = (db: Database, table: string, nodeId: string) => db.prepare(`SELECT COUNT(*) FROM ${table} WHERE node_id = ?`).pluck().get(nodeId) as number;

describe('scan recording (migration 060 layout)', () => {
  it('does not record a scan of a node deleted meanwhile, and records the rest of its batch', () => {
    const { db, writer } = setup();
    addNode(db, 'n1', 'AAAAAAAA');
    subscribeToScans(db, 'org');
    expect(writer.write([scan('n1'), scan('gone'), scan('n1')]).map((id) => id !== null)).toEqual([true, false, true]);
    expect(db.prepare('SELECT scan_count FROM nodes WHERE id = ?').pluck().get('n1')).toBe(2);
    expect(db.prepare('SELECT COUNT(*) FROM outbox_events').pluck().get()).toBe(2);
  });

  it('writes node.scanned outbox events only while an endpoint of the organization subscribes to them', () => {
    const { db, writer } = setup();
    addNode(db, 'n1', 'AAAAAAAA');
    db.prepare("INSERT INTO organizations (id, name, created_at) VALUES ('other', 'Other', ?)").run(new Date(T0).toISOString());
    const events = () => db.prepare("SELECT json_extract(data_json, '$.scan_id') FROM outbox_events WHERE type = 'node.scanned' ORDER BY seq").pluck().all();
    writer.write([scan('n1')]);
    expect(events()).toEqual([]);
    subscribeToScans(db, 'other'); // another organization's endpoint does not count
    writer.write([scan('n1')]);
    expect(events()).toEqual([]);
    subscribeToScans(db, 'org');
    const [id] = writer.write([scan('n1'), scan('n1', { is_bot: 1 })]);
    expect(events()).toEqual([id]); // bots never get one
    db.prepare("DELETE FROM webhooks WHERE org_id = 'org'").run();
    writer.write([scan('n1')]);
    expect(events()).toEqual([id]);
    // The writer caches the answer per organization until a webhook changes (migration 062).
    const hook = subscribeToScans(db, 'org');
    const [again] = writer.write([scan('n1')]);
    expect(events()).toEqual([id, again]);
    db.prepare(`UPDATE webhooks SET events_json = '["node.updated"]' WHERE id = ?`).run(hook);
    writer.write([scan('n1')]);
    expect(events()).toEqual([id, again]);
    db.prepare(`UPDATE webhooks SET events_json = '["node.updated","node.scanned"]' WHERE id = ?`).run(hook);
    const [third] = writer.write([scan('n1')]);
    expect(events()).toEqual([id, again, third]);
    expect(db.prepare('SELECT COUNT(*) FROM scan_events').pluck().get()).toBe(8);
  });

  it('lists scans newest first, bots filtered, including scans not folded yet', async () => {
    const { db, writer, analytics } = setup();
    addNode(db, 'n1', 'AAAAAAAA');
    addNode(db, 'n2', 'BBBBBBBB');
    writer.write([scan('n1'), scan('n2'), scan('n1', { is_bot: 1 })]);
    await analytics.catchUp();
    writer.write([scan('n1'), scan('n1')]); // not folded yet
    const list = await analytics.listScans('n1', { limit: 10, offset: 0 });
    expect(list.total).toBe(3);
    expect(list.rows.map((r) => r.timestamp)).toEqual([...list.rows.map((r) => r.timestamp)].sort().reverse());
    expect(list.rows).toHaveLength(3);
    expect((await analytics.listScans('n1', { bots: 'include', limit: 2, offset: 0 })).rows).toHaveLength(2);
    expect((await analytics.listScans('n1', { bots: 'include', limit: 10, offset: 0 })).total).toBe(4);
    expect((await analytics.listScans('n1', { bots: 'only', limit: 10, offset: 0 })).total).toBe(1);
    expect((await pagesOf(analytics.scanPages('n1', { bots: 'include' }))).flat()).toHaveLength(4);
  });

  it('pages through a node\'s scans newest first by (time, id), ties included, none twice (CSV export)', async () => {
    const { db, writer, analytics } = setup();
    addNode(db, 'n1', 'AAAAAAAA');
    addNode(db, 'n2', 'BBBBBBBB');
    const same = T0 + 500_000;
    writer.write([scan('n1'), scan('n1', { ts: same }), scan('n1', { ts: same }), scan('n2'), scan('n1', { ts: same })]);
    writer.write([scan('n1', { is_bot: 1 }), scan('n1'), scan('n1', { ts: same }), scan('n1')]);
    const all = (await analytics.listScans('n1', { bots: 'include', limit: 100, offset: 0 })).rows;
    expect(all).toHaveLength(8);
    const pages = await pagesOf(analytics.scanPages('n1', { bots: 'include' }, 3));
    expect(pages.map((p) => p.length)).toEqual([3, 3, 2]);
    expect(pages.flat().map((s) => s.id)).toEqual(all.map((s) => s.id));
    // exactly a page size: no empty page at the end
    expect((await pagesOf(analytics.scanPages('n1', { bots: 'include' }, 4))).map((p) => p.length)).toEqual([4, 4]);
    expect((await pagesOf(analytics.scanPages('n1', {}, 3))).flat()).toHaveLength(7);
    expect((await pagesOf(analytics.scanPages('n1', { from: new Date(same).toISOString(), to: new Date(same + 1).toISOString() }, 2))).flat()).toHaveLength(4);
    expect((await pagesOf(analytics.scanPages('n2', {}, 3))).flat()).toHaveLength(1);
  });

  it('deleting a node deletes its scans, folded and not yet folded, and nobody else\'s', async () => {
    const { db, writer, analytics } = setup();
    addNode(db, 'n1', 'AAAAAAAA');
    addNode(db, 'n2', 'BBBBBBBB');
    writer.write([scan('n1'), scan('n2'), scan('n1')]);
    await analytics.catchUp();
    writer.write([scan('n1'), scan('n2')]);
    expect(rowsOf(db, 'scan_events_by_node', 'n1')).toBe(2);
    db.prepare('DELETE FROM nodes WHERE id = ?').run('n1');
    expect(rowsOf(db, 'scan_events', 'n1')).toBe(0);
    expect(rowsOf(db, 'scan_events_by_node', 'n1')).toBe(0);
    expect(rowsOf(db, 'scan_events', 'n2')).toBe(2);
    await analytics.catchUp();
    expect(rowsOf(db, 'scan_events_by_node', 'n2')).toBe(2);
  });

  it('never hands out a scan id twice: scans after deleting the node with the newest ones are folded', async () => {
    const { db, writer, analytics } = setup();
    addNode(db, 'n1', 'AAAAAAAA');
    addNode(db, 'n2', 'BBBBBBBB');
    writer.write([scan('n1'), scan('n2')]);
    const newest = writer.write([scan('n2'), scan('n2')]).at(-1) as number;
    await analytics.catchUp();
    db.prepare('DELETE FROM nodes WHERE id = ?').run('n2');
    const [next] = writer.write([scan('n1')]);
    expect(next).toBeGreaterThan(newest);
    expect((await analytics.listScans('n1', { limit: 10, offset: 0 })).total).toBe(2);
    expect(rowsOf(db, 'scan_events_by_node', 'n1')).toBe(2);
  });

  it('migration 060 keeps every scan and its id, orders the folded ones by node, and goes on counting above them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'waymark-060-'));
    dirs.push(dir);
    const before = join(dir, 'migrations-059');
    mkdirSync(before);
    for (const f of readdirSync(defaultMigrationsDir)) if (f < '060') copyFileSync(join(defaultMigrationsDir, f), join(before, f));
    const file = join(dir, 'waymark.db');
    let db = openDatabase(file, { migrationsDir: before });
    db.prepare("INSERT INTO organizations (id, name, created_at) VALUES ('org', 'Org', ?)").run(new Date(T0).toISOString());
    addNode(db, 'n1', 'AAAAAAAA');
    addNode(db, 'n2', 'BBBBBBBB');
    const insert = db.prepare(
      `INSERT INTO scan_events (node_id, org_id, ts, device_type, os, browser, country, source, rule_id, outcome, is_bot, visitor_hash)
       VALUES (?, 'org', ?, 'mobile', 'ios', NULL, NULL, 'qr', NULL, 'redirect', 0, 'v')`,
    );
    for (let i = 0; i < 6; i++) insert.run(i % 2 ? 'n2' : 'n1', T0 + i);
    db.prepare('UPDATE scan_rollup_state SET last_event = 4').run(); // 1..4 folded, 5..6 not yet
    db.close();

    db = openDatabase(file);
    expect(db.prepare('SELECT id FROM scan_events ORDER BY id').pluck().all()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(db.prepare('SELECT id FROM scan_events_by_node ORDER BY id').pluck().all()).toEqual([1, 2, 3, 4]);
    expect(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'scan_events'").pluck().all()).toEqual(['scan_events_sync_id']);
    await new ScanAnalytics(new SqliteStore(db), new ManualClock(T0)).catchUp();
    expect(db.prepare("SELECT id FROM scan_events_by_node WHERE node_id = 'n2' ORDER BY id").pluck().all()).toEqual([2, 4, 6]);
    db.prepare("DELETE FROM nodes WHERE id = 'n2'").run();
    const [next] = new ScanWriter(db).write([scan('n1')]);
    expect(next).toBe(7);
    db.close();
  });

  it('migration 065 fills the per-rule visitor sets from the scans already folded; the fold adds the rest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'waymark-065-'));
    dirs.push(dir);
    const before = join(dir, 'migrations-064');
    mkdirSync(before);
    for (const f of readdirSync(defaultMigrationsDir)) if (f < '065') copyFileSync(join(defaultMigrationsDir, f), join(before, f));
    const file = join(dir, 'waymark.db');
    let db = openDatabase(file, { migrationsDir: before });
    db.prepare("INSERT INTO organizations (id, name, created_at) VALUES ('org', 'Org', ?)").run(new Date(T0).toISOString());
    addNode(db, 'n1', 'AAAAAAAA');
    const insert = db.prepare(
      `INSERT INTO scan_events (node_id, org_id, ts, device_type, os, browser, country, source, rule_id, outcome, is_bot, visitor_hash)
       VALUES ('n1', 'org', ?, 'mobile', 'ios', NULL, NULL, 'qr', ?, 'redirect', ?, ?)`,
    );
    insert.run(T0, 'r1', 0, 'v1');
    insert.run(T0 + 1, 'r1', 0, 'v1'); // the same visitor again
    insert.run(T0 + 2, null, 0, 'v2');
    insert.run(T0 + 3, 'r1', 1, 'bot'); // bots are not counted
    insert.run(T0 + 4, 'r1', 0, 'v3'); // not folded yet
    db.prepare('UPDATE scan_rollup_state SET last_event = 4').run();
    db.close();

    db = openDatabase(file);
    const sets = () => db.prepare('SELECT rule_key, visitor_hash FROM scan_rule_visitor_hours ORDER BY rule_key, visitor_hash').all();
    expect(sets()).toEqual([
      { rule_key: '', visitor_hash: 'v2' },
      { rule_key: 'r1', visitor_hash: 'v1' },
    ]);
    await new ScanAnalytics(new SqliteStore(db), new ManualClock(T0)).catchUp();
    expect(sets()).toEqual([
      { rule_key: '', visitor_hash: 'v2' },
      { rule_key: 'r1', visitor_hash: 'v1' },
      { rule_key: 'r1', visitor_hash: 'v3' },
    ]);
    db.close();
  });

  it('under a sustained load, the background fold keeps the backlog near its limit (and leaves it alone below)', async () => {
    const { db, writer, analytics } = setup();
    addNode(db, 'n1', 'AAAAAAAA');
    const clock = new ManualClock(T0);
    const busy = new ScanAnalytics(new SqliteStore(db), clock);
    const pending = () => db.prepare('SELECT COUNT(*) FROM scan_events WHERE id > (SELECT last_event FROM scan_rollup_state)').pluck().get() as number;
    writer.write(Array.from({ length: 5 }, () => scan('n1')));
    // Counts the background steps' looks at the backlog, so that "below the limit nothing is
    // folded" is checked after steps that ran, not after a sleep.
    const repo = (busy as unknown as { repo: { backlog(db: Executor): Promise<number> } }).repo;
    const backlog = repo.backlog.bind(repo);
    let looks = 0;
    repo.backlog = (on) => (looks++, backlog(on));
    busy.start(() => clock.now(), { backlogLimit: 10, stepMs: 10 }); // a scan "just now", always
    try {
      await vi.waitFor(() => expect(looks).toBeGreaterThanOrEqual(3), { timeout: 5000, interval: 5 });
      expect(pending()).toBe(5); // below the limit: scans first
      writer.write(Array.from({ length: 40 }, () => scan('n1')));
      const deadline = Date.now() + 5000;
      while (pending() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(pending()).toBe(0); // above it: folded (one chunk takes all 45 here)
      expect((await analytics.listScans('n1', { limit: 1, offset: 0 })).total).toBe(45);
    } finally {
      await busy.stop();
    }
  });
});
