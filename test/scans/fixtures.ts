/** Test fixtures for the scan suites: a real SQLite file in a temp dir, seeded through SQL. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { openDatabase, type Database } from '../../server/db/database.ts';

export interface Fixture {
  db: Database;
  dir: string;
  file: string;
  orgId: string;
  node(opts: { slug: string; function_type: string; payload: unknown; status?: string; label?: string }): string;
  rule(nodeId: string, opts: { rule_type: string; conditions: unknown; function_type: string; payload: unknown; priority?: number; enabled?: boolean; created_at?: string }): string;
  close(): void;
}

let counter = 0;

export function createFixture(): Fixture {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-scans-'));
  const file = join(dir, 'waymark.sqlite');
  const db = openDatabase(file);
  const orgId = randomUUID();
  const now = '2026-11-21T12:00:00.000Z';
  db.prepare('INSERT INTO organizations (id, name, created_at) VALUES (?, ?, ?)').run(orgId, 'Test org', now);
  return {
    db,
    dir,
    file,
    orgId,
    node({ slug, function_type, payload, status = 'active', label = 'Node' }) {
      const id = randomUUID();
      db.prepare('INSERT INTO slugs (slug, org_id, node_id, minted_at) VALUES (?, ?, ?, ?)').run(slug, orgId, id, now);
      db.prepare(
        `INSERT INTO nodes (id, org_id, slug, label, function_type, payload_json, status, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(id, orgId, slug, label, function_type, JSON.stringify(payload), status, now, now);
      return id;
    },
    rule(nodeId, { rule_type, conditions, function_type, payload, priority = 0, enabled = true, created_at }) {
      const id = randomUUID();
      const at = created_at ?? new Date(Date.parse(now) + ++counter).toISOString();
      db.prepare(
        `INSERT INTO rules (id, node_id, rule_type, conditions_json, function_type, payload_json, priority, enabled, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(id, nodeId, rule_type, JSON.stringify(conditions), function_type, JSON.stringify(payload), priority, enabled ? 1 : 0, at, at);
      return id;
    },
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
