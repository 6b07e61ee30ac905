import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../db/database.ts';
import { ManualClock } from '../../platform/clock.ts';
import type { SyncChangeT } from '../../schemas/sync.ts';
import { insertOrg } from '../../../test/support/sqliteOrg.ts';
import { captureState } from '../../db/capture.ts';
import { ChangeApplier, type ApplyContext } from './apply.ts';
import { ReplicationRepo } from './repo.ts';
import { formatHlc } from './hlc.ts';

const T0 = Date.parse('2026-11-21T12:00:00.000Z');

function instance() {
  const db = openDatabase(':memory:');
  const clock = new ManualClock(T0 + 60_000);
  captureState(db).now = () => clock.now();
  captureState(db).writer = 'local/1';
  const orgId = insertOrg(db, 'Org');
  const conflicts: Array<{ kind: string; detail: Record<string, unknown> }> = [];
  const ctx: ApplyContext = { orgId, now: new Date(T0).toISOString(), conflict: (kind, detail) => conflicts.push({ kind, detail }) };
  const applier = new ChangeApplier(new ReplicationRepo(db), captureState(db));
  const apply = (...changes: SyncChangeT[]) => db.transaction(() => changes.forEach((c) => applier.apply(c, ctx)))();
  const node = (id: string) => db.prepare('SELECT label, status, payload_json FROM nodes WHERE id = ?').get(id);
  return { db, apply, node, conflicts, applier, orgId };
}

let seq = 0;
const at = (ms: number, counter = 0) => formatHlc(T0 + ms, counter);
const create = (id: string, slug: string, ms: number, writer = 'site-a/1'): SyncChangeT => ({
  seq: ++seq,
  entity: 'node',
  entity_id: id,
  op: 'upsert',
  fields: {
    slug,
    label: 'first',
    function_type: 'redirect',
    payload_json: '{"url":"https://example.com"}',
    status: 'active',
    hardware_id: null,
    template_id: null,
    batch_id: null,
    serial: null,
    serial_number: null,
    created_at: new Date(T0).toISOString(),
    updated_at: new Date(T0).toISOString(),
  },
  hlc: at(ms),
  writer,
  group: null,
});
const rule = (id: string, ms: number, writer: string, nodeId = 'n1'): SyncChangeT => ({
  seq: ++seq,
  entity: 'rule',
  entity_id: id,
  op: 'upsert',
  fields: { node_id: nodeId, rule_type: 'device', conditions_json: '{"devices":["ios"]}', function_type: 'redirect', payload_json: '{"url":"https://example.com/r"}', priority: 1, enabled: 1, created_at: new Date(T0).toISOString(), updated_at: new Date(T0).toISOString() },
  hlc: at(ms),
  writer,
  group: null,
});
const edit = (id: string, fields: Record<string, string>, ms: number, writer: string): SyncChangeT => ({ seq: ++seq, entity: 'node', entity_id: id, op: 'upsert', fields, hlc: at(ms), writer, group: null });
const del = (id: string, slug: string, ms: number, writer: string): SyncChangeT => ({ seq: ++seq, entity: 'node', entity_id: id, op: 'delete', fields: { slug }, hlc: at(ms), writer, group: null });

describe('ChangeApplier: field-level last-writer-wins', () => {
  it('keeps the newest version of each field, whatever the order of arrival', () => {
    const changes = [
      create('n1', 'AAAAAAAA', 0),
      edit('n1', { label: 'from-b' }, 20, 'site-b/1'),
      edit('n1', { label: 'from-a', status: 'paused' }, 10, 'site-a/1'),
      edit('n1', { payload_json: '{"url":"https://example.com/c"}' }, 5, 'site-c/1'),
      edit('n1', { status: 'active' }, 10, 'site-c/1'), // same HLC as a's status: writer id breaks the tie
    ];
    const orders = [[0, 1, 2, 3, 4], [0, 4, 3, 2, 1], [0, 2, 4, 1, 3]];
    const results = orders.map((order) => {
      const i = instance();
      for (const k of order) i.apply(changes[k]!);
      return i.node('n1');
    });
    expect(results[0]).toEqual({ label: 'from-b', status: 'active', payload_json: '{"url":"https://example.com/c"}' });
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
  });

  it('records applied changes under their origin writer and HLC, as pulled (never pushed back)', () => {
    const i = instance();
    i.apply(create('n1', 'AAAAAAAB', 0), edit('n1', { label: 'x' }, 1, 'site-b/1'), edit('n1', { label: 'old' }, 0, 'site-c/1'));
    const rows = i.db.prepare("SELECT op, writer, hlc, fields, pushed, pulled FROM sync_outbox WHERE entity = 'node' ORDER BY seq").all() as Array<Record<string, unknown>>;
    expect(rows.map((r) => [r.writer, r.hlc, r.pushed, r.pulled])).toEqual([
      ['site-a/1', at(0), 1, 1],
      ['site-b/1', at(1), 1, 1],
    ]);
    expect(JSON.parse(rows[1]!.fields as string)).toEqual({ label: 'x' });
    // A local edit afterwards orders after everything received and is pending.
    i.db.prepare("UPDATE nodes SET label = 'local' WHERE id = 'n1'").run();
    const local = i.db.prepare('SELECT writer, hlc, pushed FROM sync_outbox ORDER BY seq DESC LIMIT 1').get() as { writer: string; hlc: string; pushed: number };
    expect(local.writer).toBe('local/1');
    expect(local.hlc > at(1)).toBe(true);
    expect(local.pushed).toBe(0);
  });

  it('delete is final: a later edit is logged, not applied, and the slug stays tombstoned', () => {
    const i = instance();
    i.apply(create('n1', 'AAAAAAAC', 0), del('n1', 'AAAAAAAC', 5, 'site-a/1'), edit('n1', { label: 'late' }, 50, 'site-b/1'));
    expect(i.node('n1')).toBeUndefined();
    expect(i.db.prepare("SELECT deleted_at IS NOT NULL FROM slugs WHERE slug = 'AAAAAAAC'").pluck().get()).toBe(1);
    expect(i.conflicts).toEqual([{ kind: 'edit_after_delete', detail: expect.objectContaining({ entity: 'node', entity_id: 'n1', fields: { label: 'late' }, deleted_by: 'site-a/1' }) }]);
    // An edit older than the delete (made before it, or a replay) simply lost: nothing to log.
    i.apply(edit('n1', { label: 'older' }, 3, 'site-c/1'), create('n1', 'AAAAAAAC', 0));
    expect(i.conflicts).toHaveLength(1);
    // The other order: an edit made after the delete arrives first; the delete still wins and the
    // edit is logged when the delete arrives.
    i.apply(create('n3', 'AAAAAAAN', 0), edit('n3', { label: 'late-first' }, 50, 'site-b/1'), del('n3', 'AAAAAAAN', 5, 'site-a/1'));
    expect(i.node('n3')).toBeUndefined();
    expect(i.conflicts[1]).toEqual({ kind: 'edit_after_delete', detail: expect.objectContaining({ entity_id: 'n3', writer: 'site-b/1', hlc: at(50), fields: { label: 'late-first' } }) });
    expect(i.conflicts).toHaveLength(2);
    // A delete of a node this side never had still tombstones its slug; its creation arriving later is refused.
    i.apply(del('n2', 'AAAAAAAD', 5, 'site-a/1'), create('n2', 'AAAAAAAD', 0));
    expect(i.node('n2')).toBeUndefined();
    expect(i.db.prepare("SELECT deleted_at IS NOT NULL FROM slugs WHERE slug = 'AAAAAAAD'").pluck().get()).toBe(1);
  });

  it('logs every edit made after a delete, also two of one field and one that lost to a newer version', () => {
    const i = instance();
    i.apply(
      create('n1', 'AAAAAAAG', 0),
      edit('n1', { label: 'b-1' }, 20, 'site-b/1'),
      edit('n1', { label: 'b-2' }, 30, 'site-b/1'),
      edit('n1', { label: 'c-lost' }, 25, 'site-c/1'), // arrives after b-2: lost by last-writer-wins
      del('n1', 'AAAAAAAG', 10, 'site-a/1'),
    );
    expect(i.conflicts.map((c) => [c.detail.writer, c.detail.fields])).toEqual([
      ['site-b/1', { label: 'b-1' }],
      ['site-c/1', { label: 'c-lost' }],
      ['site-b/1', { label: 'b-2' }],
    ]);
  });

  it('two sides deleting offline: the earlier delete wins in either order, and the edits between are logged once', () => {
    const ruleEdit = (id: string, ms: number, writer: string): SyncChangeT => ({ seq: ++seq, entity: 'rule', entity_id: id, op: 'upsert', fields: { priority: ms }, hlc: at(ms), writer, group: null });
    const delAt = (ms: number, writer: string): SyncChangeT => ({ ...del('n1', 'AAAAAAAH', ms, writer), fields: { slug: 'AAAAAAAH', deleted_at: new Date(T0 + ms).toISOString() } });
    const early = delAt(10, 'site-a/1');
    const late = delAt(40, 'site-b/1');
    const changes = [create('n1', 'AAAAAAAH', 0), rule('r1', 1, 'site-a/1'), edit('n1', { label: 'between' }, 20, 'site-b/1'), ruleEdit('r1', 25, 'site-b/1'), edit('n1', { label: 'after-both' }, 50, 'site-c/1')];
    const orders = [
      [...changes, late, early],
      [...changes, early, late],
      [changes[0]!, changes[1]!, late, changes[2]!, changes[3]!, early, changes[4]!],
    ];
    for (const order of orders) {
      const i = instance();
      i.apply(...order);
      const logged = i.conflicts.map((c) => [c.detail.entity, c.detail.hlc, c.detail.deleted_hlc]);
      expect(logged.sort()).toEqual(
        [
          ['node', at(20), at(10)],
          ['node', at(50), expect.any(String)],
          ['rule', at(25), at(10)],
        ].sort(),
      );
      expect(i.db.prepare("SELECT hlc, writer FROM sync_tombstones WHERE entity_id IN ('n1', 'r1') ORDER BY entity_id").all()).toEqual([
        { hlc: at(10), writer: 'site-a/1' },
        { hlc: at(10), writer: 'site-a/1' },
      ]);
      expect(i.db.prepare("SELECT deleted_at FROM slugs WHERE slug = 'AAAAAAAH'").pluck().get()).toBe(new Date(T0 + 10).toISOString());
      // The earlier delete is in this side's feed whichever came first, so the other sides learn it.
      expect(i.db.prepare("SELECT COUNT(*) FROM sync_outbox WHERE entity = 'node' AND op = 'delete' AND hlc = ?").pluck().get(at(10))).toBe(1);
    }
  });

  it("records a node's rules' deletes under its organization, so they travel like the rule's own delete (migration 061)", () => {
    const i = instance();
    i.apply(create('n1', 'AAAAAAAN', 0), rule('r1', 1, 'site-a/1'), create('n2', 'AAAAAAAP', 2), rule('r2', 3, 'site-a/1', 'n2'));
    // Pulled: the node's delete removes its rules first, with the delete's writer and HLC.
    i.apply(del('n1', 'AAAAAAAN', 10, 'site-b/1'));
    // Local: the rules' deletes are pushed with the node's.
    i.db.prepare("DELETE FROM nodes WHERE id = 'n2'").run();
    const deletes = i.db.prepare("SELECT entity, entity_id, org_id, hlc, writer, pushed FROM sync_outbox WHERE op = 'delete' ORDER BY seq").all() as Array<Record<string, unknown>>;
    expect(deletes.map((d) => [d.entity, d.entity_id, d.org_id, d.writer, d.pushed])).toEqual([
      ['rule', 'r1', i.orgId, 'site-b/1', 1],
      ['node', 'n1', i.orgId, 'site-b/1', 1],
      ['rule', 'r2', i.orgId, 'local/1', 0],
      ['node', 'n2', i.orgId, 'local/1', 0],
    ]);
    expect(deletes[0]!.hlc).toBe(at(10));
    expect(new ReplicationRepo(i.db).pending(i.orgId, 10).map((r) => [r.entity, r.entity_id])).toEqual([
      ['rule', 'r2'],
      ['node', 'n2'],
    ]);
    expect(i.db.prepare("SELECT hlc, writer FROM sync_tombstones WHERE entity = 'rule' AND entity_id = 'r1'").get()).toEqual({ hlc: at(10), writer: 'site-b/1' });
  });

  it('refuses a slug outside the writer\'s leases or held by another node (logged), and stores scans once', () => {
    const i = instance();
    const refuse: ApplyContext = { orgId: i.orgId, now: new Date(T0).toISOString(), checkSlug: () => 'slug_outside_lease', conflict: (kind, detail) => i.conflicts.push({ kind, detail }) };
    i.db.transaction(() => i.applier.apply(create('n9', 'AAAAAAAE', 0), refuse))();
    i.apply(create('n1', 'AAAAAAAF', 0), create('n2', 'AAAAAAAF', 1, 'site-b/1'));
    expect(i.node('n9')).toBeUndefined();
    expect(i.node('n2')).toBeUndefined();
    expect(i.conflicts.map((c) => c.kind)).toEqual(['slug_outside_lease', 'slug_duplicate']);

    const scan = (id: string) => ({ id, node_id: 'n1', ts: T0, device_type: 'mobile', os: 'ios', browser: null, country: null, source: 'qr', rule_id: null, outcome: 'redirect', is_bot: 0, visitor_hash: 'h' });
    expect(i.applier.applyScans([scan('site-a/1:1'), scan('site-a/1:2')], i.orgId)).toHaveLength(2);
    expect(i.applier.applyScans([scan('site-a/1:2'), scan('site-a/1:3'), { ...scan('x:1'), node_id: 'gone' }], i.orgId).map((s) => s.id)).toEqual(['site-a/1:3']);
    expect(i.db.prepare("SELECT scan_count FROM nodes WHERE id = 'n1'").pluck().get()).toBe(3);
  });
});

describe('ChangeApplier: clashes that never block the queue', () => {
  it('keeps a clashing batch serial (logged as serial_clash) and logs a change it cannot store', () => {
    const i = instance();
    const withSerial = (id: string, slug: string, extra: Record<string, string>) => {
      const c = create(id, slug, 0);
      return { ...c, fields: { ...c.fields, ...extra } };
    };
    i.apply(withSerial('n1', 'AAAAAAAG', { serial: 'H-0001' }), withSerial('n2', 'AAAAAAAH', { serial: 'H-0001' }));
    expect(i.db.prepare("SELECT id FROM nodes WHERE serial = 'H-0001' ORDER BY id").pluck().all()).toEqual(['n1', 'n2']);
    i.apply(withSerial('n3', 'AAAAAAAJ', { hardware_id: 'tag-1' }), withSerial('n4', 'AAAAAAAK', { hardware_id: 'tag-1' }), create('n5', 'AAAAAAAM', 0));
    expect(i.node('n4')).toBeUndefined();
    expect(i.node('n5')).toBeDefined();
    expect(i.conflicts.map((c) => c.kind)).toEqual(['serial_clash', 'not_applicable']);
  });
});
