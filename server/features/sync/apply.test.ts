import { afterEach, describe, expect, it } from 'vitest';
import { openTestStore, type TestStore } from '../../../test/support/stores.ts';
import { needs } from '../../../test/support/system.ts';
import { changeCapture } from '../../db/changeCapture.ts';
import { ManualClock } from '../../platform/clock.ts';
import { formatHlc } from '../../platform/hlc.ts';
import type { SyncChangeT } from '../../schemas/sync.ts';
import { ChangeApplier, type ApplyContext } from './apply.ts';
import { ReplicationRepo } from './repo.ts';

const T0 = Date.parse('2026-11-21T12:00:00.000Z');

const open: TestStore[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function instanceOn(dialect: 'sqlite' | 'postgres') {
  const test = await openTestStore(dialect);
  open.push(test);
  const { store } = test;
  const db = store.db;
  const clock = new ManualClock(T0 + 60_000);
  const capture = await changeCapture(store, () => clock.now());
  capture.writer = 'local/1';
  const orgId = 'org-1';
  await db.insertInto('organizations').values({ id: orgId, name: 'Org', created_at: new Date(T0).toISOString() }).execute();
  const conflicts: Array<{ kind: string; detail: Record<string, unknown> }> = [];
  const ctx: ApplyContext = {
    orgId,
    now: new Date(T0).toISOString(),
    conflict: async (kind, detail) => {
      conflicts.push({ kind, detail });
    },
  };
  const repo = new ReplicationRepo(store.dialect);
  const applier = new ChangeApplier(repo, capture);
  const apply = (...changes: SyncChangeT[]) =>
    store.transaction(async (tx) => {
      for (const c of changes) await applier.apply(tx, c, ctx);
    });
  const node = async (id: string) =>
    db.selectFrom('nodes').select(['label', 'status', 'payload_json']).where('id', '=', id).executeTakeFirst();
  const slugDeletedAt = async (slug: string) => (await db.selectFrom('slugs').select('deleted_at').where('slug', '=', slug).executeTakeFirst())?.deleted_at;
  return { store, db, apply, node, slugDeletedAt, conflicts, applier, repo, orgId, clock };
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

const backends = [
  { dialect: 'sqlite' as const, skip: false },
  { dialect: 'postgres' as const, skip: needs.postgres() !== null },
];

describe.each(backends)('ChangeApplier on $dialect', ({ dialect, skip }) => {
  const instance = () => instanceOn(dialect);
  const run = skip ? it.skip : it;
describe('field-level last-writer-wins', () => {
  run('keeps the newest version of each field, whatever the order of arrival', async () => {
    const changes = [
      create('n1', 'AAAAAAAA', 0),
      edit('n1', { label: 'from-b' }, 20, 'site-b/1'),
      edit('n1', { label: 'from-a', status: 'paused' }, 10, 'site-a/1'),
      edit('n1', { payload_json: '{"url":"https://example.com/c"}' }, 5, 'site-c/1'),
      edit('n1', { status: 'active' }, 10, 'site-c/1'), // same HLC as a's status: writer id breaks the tie
    ];
    const orders = [[0, 1, 2, 3, 4], [0, 4, 3, 2, 1], [0, 2, 4, 1, 3]];
    const results = [];
    for (const order of orders) {
      const i = await instance();
      for (const k of order) await i.apply(changes[k]!);
      results.push(await i.node('n1'));
    }
    expect(results[0]).toEqual({ label: 'from-b', status: 'active', payload_json: '{"url":"https://example.com/c"}' });
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
  });

  run('records applied changes under their origin writer and HLC, as pulled (never pushed back)', async () => {
    const i = await instance();
    await i.apply(create('n1', 'AAAAAAAB', 0), edit('n1', { label: 'x' }, 1, 'site-b/1'), edit('n1', { label: 'old' }, 0, 'site-c/1'));
    const rows = await i.db.selectFrom('sync_outbox').select(['op', 'writer', 'hlc', 'fields', 'pushed', 'pulled']).where('entity', '=', 'node').orderBy('seq').execute();
    expect(rows.map((r) => [r.writer, r.hlc, r.pushed, r.pulled])).toEqual([
      ['site-a/1', at(0), 1, 1],
      ['site-b/1', at(1), 1, 1],
    ]);
    expect(JSON.parse(rows[1]!.fields as string)).toEqual({ label: 'x' });
    // A local edit afterwards orders after everything received and is pending.
    await i.store.transaction((tx) => tx.updateTable('nodes').set({ label: 'local' }).where('id', '=', 'n1').execute());
    const local = await i.db.selectFrom('sync_outbox').select(['writer', 'hlc', 'pushed']).orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow();
    expect(local.writer).toBe('local/1');
    expect(local.hlc > at(1)).toBe(true);
    expect(local.pushed).toBe(0);
  });

  run('delete is final: a later edit is logged, not applied, and the slug stays tombstoned', async () => {
    const i = await instance();
    await i.apply(create('n1', 'AAAAAAAC', 0), del('n1', 'AAAAAAAC', 5, 'site-a/1'), edit('n1', { label: 'late' }, 50, 'site-b/1'));
    expect(await i.node('n1')).toBeUndefined();
    expect(await i.slugDeletedAt('AAAAAAAC')).toEqual(expect.any(String));
    expect(i.conflicts).toEqual([{ kind: 'edit_after_delete', detail: expect.objectContaining({ entity: 'node', entity_id: 'n1', fields: { label: 'late' }, deleted_by: 'site-a/1' }) }]);
    // An edit older than the delete (made before it, or a replay) simply lost: nothing to log.
    await i.apply(edit('n1', { label: 'older' }, 3, 'site-c/1'), create('n1', 'AAAAAAAC', 0));
    expect(i.conflicts).toHaveLength(1);
    // The other order: an edit made after the delete arrives first; the delete still wins and the
    // edit is logged when the delete arrives.
    await i.apply(create('n3', 'AAAAAAAN', 0), edit('n3', { label: 'late-first' }, 50, 'site-b/1'), del('n3', 'AAAAAAAN', 5, 'site-a/1'));
    expect(await i.node('n3')).toBeUndefined();
    expect(i.conflicts[1]).toEqual({ kind: 'edit_after_delete', detail: expect.objectContaining({ entity_id: 'n3', writer: 'site-b/1', hlc: at(50), fields: { label: 'late-first' } }) });
    expect(i.conflicts).toHaveLength(2);
    // A delete of a node this side never had still tombstones its slug; its creation arriving later is refused.
    await i.apply(del('n2', 'AAAAAAAD', 5, 'site-a/1'), create('n2', 'AAAAAAAD', 0));
    expect(await i.node('n2')).toBeUndefined();
    expect(await i.slugDeletedAt('AAAAAAAD')).toEqual(expect.any(String));
  });

  run('logs every edit made after a delete, also two of one field and one that lost to a newer version', async () => {
    const i = await instance();
    await i.apply(
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

  run('two sides deleting offline: the earlier delete wins in either order, and the edits between are logged once', async () => {
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
      const i = await instance();
      await i.apply(...order);
      const logged = i.conflicts.map((c) => [c.detail.entity, c.detail.hlc, c.detail.deleted_hlc]);
      expect(logged.sort()).toEqual(
        [
          ['node', at(20), at(10)],
          ['node', at(50), expect.any(String)],
          ['rule', at(25), at(10)],
        ].sort(),
      );
      expect(await i.db.selectFrom('sync_tombstones').select(['hlc', 'writer']).where('entity_id', 'in', ['n1', 'r1']).orderBy('entity_id').execute()).toEqual([
        { hlc: at(10), writer: 'site-a/1' },
        { hlc: at(10), writer: 'site-a/1' },
      ]);
      expect(await i.slugDeletedAt('AAAAAAAH')).toBe(new Date(T0 + 10).toISOString());
      // The earlier delete is in this side's feed whichever came first, so the other sides learn it.
      const earlier = await i.db.selectFrom('sync_outbox').select('seq').where('entity', '=', 'node').where('op', '=', 'delete').where('hlc', '=', at(10)).execute();
      expect(earlier).toHaveLength(1);
    }
  });

  run("records a node's rules' deletes under its organization, so they travel like the rule's own delete (migration 061)", async () => {
    const i = await instance();
    await i.apply(create('n1', 'AAAAAAAN', 0), rule('r1', 1, 'site-a/1'), create('n2', 'AAAAAAAP', 2), rule('r2', 3, 'site-a/1', 'n2'));
    // Pulled: the node's delete removes its rules first, with the delete's writer and HLC.
    await i.apply(del('n1', 'AAAAAAAN', 10, 'site-b/1'));
    // Local: the rules' deletes are pushed with the node's.
    await i.store.transaction((tx) => tx.deleteFrom('nodes').where('id', '=', 'n2').execute());
    const deletes = await i.db.selectFrom('sync_outbox').select(['entity', 'entity_id', 'org_id', 'hlc', 'writer', 'pushed']).where('op', '=', 'delete').orderBy('seq').execute();
    expect(deletes.map((d) => [d.entity, d.entity_id, d.org_id, d.writer, d.pushed])).toEqual([
      ['rule', 'r1', i.orgId, 'site-b/1', 1],
      ['node', 'n1', i.orgId, 'site-b/1', 1],
      ['rule', 'r2', i.orgId, 'local/1', 0],
      ['node', 'n2', i.orgId, 'local/1', 0],
    ]);
    expect(deletes[0]!.hlc).toBe(at(10));
    expect((await i.repo.pending(i.db, i.orgId, 10)).map((r) => [r.entity, r.entity_id])).toEqual([
      ['rule', 'r2'],
      ['node', 'n2'],
    ]);
    expect(await i.db.selectFrom('sync_tombstones').select(['hlc', 'writer']).where('entity', '=', 'rule').where('entity_id', '=', 'r1').executeTakeFirst()).toEqual({ hlc: at(10), writer: 'site-b/1' });
  });

  run('refuses a slug outside the writer\'s leases or held by another node (logged), and stores scans once', async () => {
    const i = await instance();
    const refuse: ApplyContext = {
      orgId: i.orgId,
      now: new Date(T0).toISOString(),
      checkSlug: async () => 'slug_outside_lease',
      conflict: async (kind, detail) => {
        i.conflicts.push({ kind, detail });
      },
    };
    await i.store.transaction((tx) => i.applier.apply(tx, create('n9', 'AAAAAAAE', 0), refuse));
    await i.apply(create('n1', 'AAAAAAAF', 0), create('n2', 'AAAAAAAF', 1, 'site-b/1'));
    expect(await i.node('n9')).toBeUndefined();
    expect(await i.node('n2')).toBeUndefined();
    expect(i.conflicts.map((c) => c.kind)).toEqual(['slug_outside_lease', 'slug_duplicate']);

    const scan = (id: string) => ({ id, node_id: 'n1', ts: T0, device_type: 'mobile', os: 'ios', browser: null, country: null, source: 'qr', rule_id: null, outcome: 'redirect', is_bot: 0, visitor_hash: 'h' });
    const applyScans = (scans: Array<ReturnType<typeof scan>>) => i.store.transaction((tx) => i.applier.applyScans(tx, scans, i.orgId));
    expect((await applyScans([scan('site-a/1:1'), scan('site-a/1:2')])).added).toHaveLength(2);
    const again = await applyScans([scan('site-a/1:2'), scan('site-a/1:3'), { ...scan('x:1'), node_id: 'gone' }]);
    expect(again.added.map((s) => s.id)).toEqual(['site-a/1:3']);
    expect(again.stored).toBe(2);
    expect(again.refused).toEqual([{ id: 'x:1', node_id: 'gone', reason: 'unknown_node' }]);
    expect((await i.db.selectFrom('nodes').select('scan_count').where('id', '=', 'n1').executeTakeFirstOrThrow()).scan_count).toBe(3);
  });
});

describe('clashes that never block the queue', () => {
  run('keeps a clashing batch serial (logged as serial_clash) and logs a change it cannot store', async () => {
    const i = await instance();
    const withSerial = (id: string, slug: string, extra: Record<string, string>) => {
      const c = create(id, slug, 0);
      return { ...c, fields: { ...c.fields, ...extra } };
    };
    await i.apply(withSerial('n1', 'AAAAAAAG', { serial: 'H-0001' }), withSerial('n2', 'AAAAAAAH', { serial: 'H-0001' }));
    expect((await i.db.selectFrom('nodes').select('id').where('serial', '=', 'H-0001').orderBy('id').execute()).map((r) => r.id)).toEqual(['n1', 'n2']);
    await i.apply(withSerial('n3', 'AAAAAAAJ', { hardware_id: 'tag-1' }), withSerial('n4', 'AAAAAAAK', { hardware_id: 'tag-1' }), create('n5', 'AAAAAAAM', 0));
    expect(await i.node('n4')).toBeUndefined();
    expect(await i.node('n5')).toBeDefined();
    expect(i.conflicts.map((c) => c.kind)).toEqual(['serial_clash', 'not_applicable']);
  });
});
});
