import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { captureState } from '../../db/capture.ts';
import { openDatabase } from '../../db/database.ts';
import { defaultMigrationsDir } from '../../db/migrate.ts';

describe('change capture (migration 055)', () => {
  it('upgrades a database with data: nodes rebuilt without losing rules or scans, existing rows recorded once', () => {
    const dir = mkdtempSync(join(tmpdir(), 'waymark-capture-'));
    try {
      const old = join(dir, 'old-migrations');
      for (const f of readdirSync(defaultMigrationsDir).filter((f) => f < '055')) cpSync(join(defaultMigrationsDir, f), join(old, f));
      const file = join(dir, 'db.sqlite');
      let db = openDatabase(file, { migrationsDir: old });
      const at = '2026-11-21T12:00:00.000Z';
      db.exec(`
        INSERT INTO organizations (id, name, created_at) VALUES ('org', 'Org', '${at}');
        INSERT INTO settings (key, value) VALUES ('sync.site_id', 'site-1'), ('sync.incarnation', 'inc-1');
        INSERT INTO templates (id, org_id, name, function_type, payload_json, created_at, updated_at) VALUES ('t1', 'org', 'T', 'redirect', '{}', '${at}', '${at}');
        INSERT INTO nodes (id, org_id, slug, label, function_type, payload_json, status, template_id, serial, created_at, updated_at)
          VALUES ('n1', 'org', 'AAAAAAAA', 'one', 'redirect', '{}', 'active', 't1', 'H-001', '${at}', '${at}');
        INSERT INTO rules (id, node_id, rule_type, conditions_json, function_type, payload_json, created_at, updated_at)
          VALUES ('r1', 'n1', 'device_based', '{}', 'redirect', '{}', '${at}', '${at}');
        INSERT INTO scan_events (node_id, org_id, ts, device_type, os, source, outcome, visitor_hash) VALUES ('n1', 'org', 1, 'mobile', 'ios', 'qr', 'redirect', 'h');
      `);
      db.close();

      db = openDatabase(file);
      expect(db.prepare('SELECT COUNT(*) FROM rules').pluck().get()).toBe(1);
      expect(db.prepare('SELECT COUNT(*) FROM scan_events').pluck().get()).toBe(1);
      expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
      expect(db.prepare('SELECT entity, entity_id, writer, pushed FROM sync_outbox ORDER BY seq').all()).toEqual([
        { entity: 'template', entity_id: 't1', writer: 'site-1/inc-1', pushed: 0 },
        { entity: 'node', entity_id: 'n1', writer: 'site-1/inc-1', pushed: 0 },
        { entity: 'rule', entity_id: 'r1', writer: 'site-1/inc-1', pushed: 0 },
      ]);
      // Serials may now repeat (a clash between sites is kept); the triggers survived the rebuild.
      db.prepare(`INSERT INTO nodes (id, org_id, slug, label, function_type, payload_json, status, serial, created_at, updated_at)
                  VALUES ('n2', 'org', 'AAAAAAAB', 'two', 'redirect', '{}', 'active', 'H-001', ?, ?)`).run(at, at);
      db.prepare("UPDATE nodes SET label = 'renamed', scan_count = 5 WHERE id = 'n1'").run();
      const last = db.prepare('SELECT entity_id, op, fields FROM sync_outbox ORDER BY seq DESC LIMIT 2').all();
      expect(last).toEqual([
        { entity_id: 'n1', op: 'upsert', fields: '{"label":"renamed"}' },
        { entity_id: 'n2', op: 'upsert', fields: expect.stringContaining('"serial":"H-001"') },
      ]);
      // scan_count alone is not a synced field: no change recorded.
      db.prepare("UPDATE nodes SET scan_count = 6 WHERE id = 'n1'").run();
      expect(db.prepare('SELECT COUNT(*) FROM sync_outbox').pluck().get()).toBe(5);
      expect(db.prepare('SELECT epoch FROM scan_cache_epoch').pluck().get()).toBeGreaterThan(0);
      expect(captureState(db).writer).toBe('site-1/inc-1');
      db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gives every row of one transaction the same group, and the next transaction another', async () => {
    const db = openDatabase(':memory:');
    const at = '2026-11-21T12:00:00.000Z';
    db.prepare("INSERT INTO organizations (id, name, created_at) VALUES ('org', 'Org', ?)").run(at);
    const add = db.prepare("INSERT INTO templates (id, org_id, name, function_type, payload_json, created_at, updated_at) VALUES (?, 'org', 'T', 'redirect', '{}', ?, ?)");
    db.transaction(() => {
      add.run('a', at, at);
      add.run('b', at, at);
    })();
    await new Promise((r) => setImmediate(r));
    add.run('c', at, at);
    const groups = db.prepare('SELECT group_id FROM sync_outbox ORDER BY seq').pluck().all() as string[];
    expect(groups[0]).toBe(groups[1]);
    expect(groups[2]).not.toBe(groups[0]);
    db.close();
  });
});
