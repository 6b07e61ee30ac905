import { afterEach, describe, expect, it } from 'vitest';
import { openTestStore, type TestStore } from '../../../test/support/stores.ts';
import { needs } from '../../../test/support/system.ts';
import { changeCapture } from '../../db/changeCapture.ts';
import type { Executor, Store } from '../../db/store.ts';
import { ManualClock } from '../../platform/clock.ts';
import { formatHlc } from '../../platform/hlc.ts';
import type { SyncChangeT } from '../../schemas/sync.ts';
import { ChangeApplier } from './apply.ts';
import { ReplicationRepo, SyncRepo } from './repo.ts';
import { SyncPruner } from './prune.ts';
import type { SyncLogger } from './site.ts';

const T0 = Date.parse('2026-11-21T12:00:00.000Z');
const iso = new Date(T0).toISOString();
const quiet: SyncLogger = { info: () => {}, error: () => {} };

const open: TestStore[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

async function setUp(dialect: 'sqlite' | 'postgres') {
  const test = await openTestStore(dialect);
  open.push(test);
  const clock = new ManualClock(T0);
  const capture = await changeCapture(test.store, () => clock.now());
  capture.writer = 'site-1/inc-1';
  await test.store.db.insertInto('organizations').values({ id: 'org', name: 'Org', created_at: iso }).execute();
  return { store: test.store, clock, capture };
}

async function addNode(tx: Executor, id: string, slug: string, label = 'one'): Promise<void> {
  await tx.insertInto('slugs').values({ slug, org_id: 'org', node_id: id, minted_at: iso }).execute();
  await tx
    .insertInto('nodes')
    .values({ id, org_id: 'org', slug, label, function_type: 'redirect', payload_json: '{}', status: 'active', created_at: iso, updated_at: iso })
    .execute();
}

const outbox = (store: Store) =>
  store.db.selectFrom('sync_outbox').select(['seq', 'entity', 'entity_id', 'op', 'fields', 'hlc', 'writer', 'group_id', 'hold', 'pushed', 'pulled', 'org_id']).orderBy('seq').execute();

const backends = [
  { dialect: 'sqlite' as const, skip: false },
  { dialect: 'postgres' as const, skip: needs.postgres() !== null },
];

describe.each(backends)('change capture on $dialect (one model for both backends)', ({ dialect, skip }) => {
  const run = skip ? it.skip : it;

  run('records inserts with all synced fields, edits with the changed ones, deletes with tombstones; one group per transaction', async () => {
    const { store, clock } = await setUp(dialect);
    await store.transaction(async (tx) => {
      await addNode(tx, 'n1', 'AAAAAAAA');
      await tx
        .insertInto('rules')
        .values({ id: 'r1', node_id: 'n1', rule_type: 'device', conditions_json: '{}', function_type: 'redirect', payload_json: '{}', created_at: iso, updated_at: iso })
        .execute();
    });
    clock.advance(5);
    await store.transaction(async (tx) => {
      await tx.updateTable('nodes').set({ label: 'renamed', scan_count: 5 }).where('id', '=', 'n1').execute();
      // scan_count alone is not a synced field: nothing recorded.
      await tx.updateTable('nodes').set({ scan_count: 6 }).where('id', '=', 'n1').execute();
    });
    await store.transaction(async (tx) => {
      await tx.updateTable('slugs').set({ deleted_at: iso }).where('slug', '=', 'AAAAAAAA').execute();
      await tx.deleteFrom('nodes').where('id', '=', 'n1').execute();
    });
    const rows = await outbox(store);
    expect(rows.map((r) => [r.entity, r.entity_id, r.op, JSON.parse(r.fields), r.writer, r.org_id, r.pushed, r.pulled])).toEqual([
      [
        'node',
        'n1',
        'upsert',
        {
          slug: 'AAAAAAAA',
          label: 'one',
          function_type: 'redirect',
          payload_json: '{}',
          status: 'active',
          hardware_id: null,
          template_id: null,
          batch_id: null,
          serial: null,
          serial_number: null,
          created_at: iso,
          updated_at: iso,
          expires_at: null,
          max_scans: null,
          password_hash: null,
          after_limit_json: null,
          minted_at: iso,
        },
        'site-1/inc-1',
        'org',
        0,
        0,
      ],
      ['rule', 'r1', 'upsert', expect.objectContaining({ node_id: 'n1', priority: 0, enabled: 1 }), 'site-1/inc-1', 'org', 0, 0],
      ['node', 'n1', 'upsert', { label: 'renamed' }, 'site-1/inc-1', 'org', 0, 0],
      // A node's rules are deleted just before it, under its organization (migration 061).
      ['rule', 'r1', 'delete', { node_id: 'n1' }, 'site-1/inc-1', 'org', 0, 0],
      ['node', 'n1', 'delete', { slug: 'AAAAAAAA', deleted_at: iso }, 'site-1/inc-1', 'org', 0, 0],
    ]);
    // HLCs increase in seq order, from the injected clock.
    const hlcs = rows.map((r) => r.hlc);
    expect([...hlcs].sort()).toEqual(hlcs);
    expect(new Set(hlcs).size).toBe(hlcs.length);
    expect(hlcs[0]! >= formatHlc(T0, 0)).toBe(true);
    expect(hlcs[2]! >= formatHlc(T0 + 5, 0)).toBe(true);
    // One group per transaction.
    expect(rows[0]!.group_id).toBe(rows[1]!.group_id);
    expect(rows[2]!.group_id).not.toBe(rows[1]!.group_id);
    expect(rows[3]!.group_id).toBe(rows[4]!.group_id);
    expect(await store.db.selectFrom('sync_tombstones').select(['entity', 'entity_id', 'parent_id']).orderBy('entity').execute()).toEqual([
      { entity: 'node', entity_id: 'n1', parent_id: null },
      { entity: 'rule', entity_id: 'r1', parent_id: 'n1' },
    ]);
    expect(await store.db.selectFrom('sync_versions').select('field').execute()).toEqual([]);
  });

  run("a write outside the app's transactions (the CLI, a single statement) carries the instance's writer id too", async () => {
    const { store } = await setUp(dialect);
    await store.db.insertInto('settings').values([{ key: 'sync.site_id', value: 'site-1' }, { key: 'sync.incarnation', value: 'inc-1' }]).execute();
    await store.db.insertInto('templates').values({ id: 't1', org_id: 'org', name: 'T', function_type: 'redirect', payload_json: '{}', created_at: iso, updated_at: iso }).execute();
    expect((await outbox(store)).map((r) => [r.entity_id, r.writer, r.seq > 0])).toEqual([['t1', 'site-1/inc-1', true]]);
  });

  run("captures an organization's scan domain, and applies one from the other side to this side's own organization", async () => {
    const { store, clock, capture } = await setUp(dialect);
    const settings = (scan_base: string | null, updated_at: string) => ({ id: 'org', org_id: 'org', scan_base, updated_at });
    await store.transaction((tx) => tx.insertInto('organization_settings').values(settings('https://a.example', iso)).execute());
    clock.advance(5);
    await store.transaction((tx) => tx.updateTable('organization_settings').set({ scan_base: 'https://b.example', updated_at: `${iso}-b` }).where('id', '=', 'org').execute());
    const rows = await outbox(store);
    expect(rows.map((r) => [r.entity, r.entity_id, r.op, JSON.parse(r.fields), r.org_id, r.pushed])).toEqual([
      ['organization', 'org', 'upsert', { scan_base: 'https://a.example', updated_at: iso }, 'org', 0],
      ['organization', 'org', 'upsert', { scan_base: 'https://b.example', updated_at: `${iso}-b` }, 'org', 0],
    ]);

    // A change made on the other side names that side's organization id: it lands on this side's.
    const applier = new ChangeApplier(new ReplicationRepo(store.dialect), capture);
    const remote = (hlc: string, scan_base: string): SyncChangeT => ({
      seq: 1,
      entity: 'organization',
      entity_id: 'remote-org-id',
      op: 'upsert',
      fields: { scan_base, updated_at: `${iso}-remote` },
      hlc,
      writer: 'remote/1',
      group: null,
    });
    const ctx = { orgId: 'org', now: iso, conflict: async () => {} };
    // Older than this side's last edit: loses (field-level last-writer-wins).
    await store.transaction((tx) => applier.apply(tx, remote(formatHlc(T0 - 1000, 0), 'https://old.example'), ctx));
    expect((await store.db.selectFrom('organization_settings').select('scan_base').executeTakeFirstOrThrow()).scan_base).toBe('https://b.example');
    await store.transaction((tx) => applier.apply(tx, remote(formatHlc(T0 + 60_000, 0), 'https://remote.example'), ctx));
    expect(await store.db.selectFrom('organization_settings').select(['id', 'org_id', 'scan_base']).execute()).toEqual([{ id: 'org', org_id: 'org', scan_base: 'https://remote.example' }]);
    // A fresh side (no row yet) gets one for its own organization.
    const fresh = await setUp(dialect);
    const freshApplier = new ChangeApplier(new ReplicationRepo(fresh.store.dialect), fresh.capture);
    await fresh.store.transaction((tx) => freshApplier.apply(tx, remote(formatHlc(T0, 1), 'https://remote.example'), ctx));
    expect(await fresh.store.db.selectFrom('organization_settings').select(['id', 'org_id', 'scan_base']).execute()).toEqual([{ id: 'org', org_id: 'org', scan_base: 'https://remote.example' }]);
    expect((await outbox(fresh.store)).map((r) => [r.entity, r.entity_id, r.pulled])).toEqual([['organization', 'org', 1]]);
  });

  run('compaction drops superseded rows older than the retention and keeps what rebuilds the same state', async () => {
    const { store, clock } = await setUp(dialect);
    await store.transaction((tx) => addNode(tx, 'n1', 'AAAAAAAB'));
    for (const label of ['two', 'three', 'four']) {
      clock.advance(1);
      await store.transaction((tx) => tx.updateTable('nodes').set({ label, updated_at: `${iso}-${label}` }).where('id', '=', 'n1').execute());
    }
    clock.advance(1);
    await store.transaction((tx) => tx.updateTable('nodes').set({ status: 'paused' }).where('id', '=', 'n1').execute());
    await store.transaction((tx) =>
      tx.insertInto('templates').values({ id: 't1', org_id: 'org', name: 'T', function_type: 'redirect', payload_json: '{}', created_at: iso, updated_at: iso }).execute(),
    );
    await store.transaction((tx) => tx.updateTable('templates').set({ name: 'T2' }).where('id', '=', 't1').execute());
    await store.transaction((tx) => tx.deleteFrom('templates').where('id', '=', 't1').execute());
    const before = await outbox(store);
    expect(before).toHaveLength(8);

    const rows = new ReplicationRepo(store.dialect);
    const pruner = new SyncPruner({ store, rows, settings: new SyncRepo(store.dialect), clock, logger: quiet, options: { retentionMs: 60_000, chunk: 3 } });
    // Within the retention nothing goes.
    expect(await pruner.prune()).toBe(0);
    clock.advance(120_000);
    // A recent edit supersedes an old one, but is itself kept whole until it is old enough.
    await store.transaction((tx) => tx.updateTable('nodes').set({ status: 'active' }).where('id', '=', 'n1').execute());
    expect(await pruner.prune()).toBe(5);
    const after = await outbox(store);
    expect(after.map((r) => [r.entity, r.op, JSON.parse(r.fields)])).toEqual([
      ['node', 'upsert', expect.objectContaining({ slug: 'AAAAAAAB', label: 'one', status: 'active' })], // the creation: slug and created_at are never rewritten
      ['node', 'upsert', { label: 'four', updated_at: `${iso}-four` }],
      ['template', 'delete', {}],
      ['node', 'upsert', { status: 'active' }],
    ]);
    // Replaying what is left gives the node as it is (every field's latest write) and the tombstone.
    const state: Record<string, unknown> = {};
    for (const r of after.filter((x) => x.entity === 'node')) Object.assign(state, JSON.parse(r.fields));
    const node = await store.db.selectFrom('nodes').select(['label', 'status', 'updated_at']).where('id', '=', 'n1').executeTakeFirstOrThrow();
    expect({ label: state.label, status: state.status, updated_at: state.updated_at }).toEqual(node);
    expect(await pruner.prune()).toBe(0);

    // Received-but-unapplied edits go once older than the retention, in chunks (here of 3).
    const old = formatHlc(clock.now() - 90_000, 0);
    const recent = formatHlc(clock.now() - 1_000, 0);
    const unapplied = [...Array.from({ length: 7 }, (_, i) => ({ id: `u${i}`, hlc: old })), { id: 'kept', hlc: recent }];
    await store.transaction((tx) =>
      tx.insertInto('sync_unapplied').values(unapplied.map((u) => ({ entity: 'node', entity_id: u.id, hlc: u.hlc, writer: 'w', fields: '{}' }))).execute(),
    );
    await pruner.prune();
    expect(await store.db.selectFrom('sync_unapplied').select('entity_id').execute()).toEqual([{ entity_id: 'kept' }]);
  });

  run('a compacted history pushed again (a remote restored from a backup) rebuilds what the whole history did', async () => {
    const site = await setUp(dialect);
    const { store, clock } = site;
    await store.transaction(async (tx) => {
      await addNode(tx, 'n1', 'AAAAAAAC');
      await addNode(tx, 'n2', 'AAAAAAAD');
      await tx.insertInto('rules').values({ id: 'r1', node_id: 'n2', rule_type: 'device', conditions_json: '{}', function_type: 'redirect', payload_json: '{}', created_at: iso, updated_at: iso }).execute();
    });
    for (const [i, label] of ['b', 'c', 'd'].entries()) {
      clock.advance(1);
      await store.transaction((tx) => tx.updateTable('nodes').set({ label, status: i % 2 ? 'paused' : 'active' }).where('id', '=', 'n1').execute());
    }
    clock.advance(1);
    await store.transaction(async (tx) => {
      await tx.updateTable('rules').set({ priority: 5 }).where('id', '=', 'r1').execute();
      await tx.updateTable('slugs').set({ deleted_at: iso }).where('slug', '=', 'AAAAAAAD').execute();
      await tx.deleteFrom('nodes').where('id', '=', 'n2').execute();
    });
    const whole = await outbox(store);
    clock.advance(120_000);
    const pruner = new SyncPruner({ store, rows: new ReplicationRepo(store.dialect), settings: new SyncRepo(store.dialect), clock, logger: quiet, options: { retentionMs: 60_000 } });
    expect(await pruner.prune()).toBeGreaterThan(0);
    const compacted = await outbox(store);
    expect(compacted.length).toBeLessThan(whole.length);

    // Two fresh remotes: one receives the whole history, the other what is left of it.
    const replay = async (rows: typeof whole) => {
      const remote = await setUp(dialect);
      remote.clock.set(clock.now());
      const applier = new ChangeApplier(new ReplicationRepo(remote.store.dialect), remote.capture);
      const changes: SyncChangeT[] = rows.map((r) => ({
        seq: r.seq,
        entity: r.entity as SyncChangeT['entity'],
        entity_id: r.entity_id,
        op: r.op as SyncChangeT['op'],
        fields: JSON.parse(r.fields) as SyncChangeT['fields'],
        hlc: r.hlc,
        writer: r.writer,
        group: r.group_id,
      }));
      await remote.store.transaction(async (tx) => {
        for (const c of changes) await applier.apply(tx, c, { orgId: 'org', now: iso, conflict: async () => {} });
      });
      const db = remote.store.db;
      return {
        nodes: await db.selectFrom('nodes').select(['id', 'slug', 'label', 'status', 'payload_json', 'created_at', 'updated_at']).orderBy('id').execute(),
        rules: await db.selectFrom('rules').select(['id', 'priority']).orderBy('id').execute(),
        slugs: await db.selectFrom('slugs').select(['slug', 'minted_at', 'deleted_at']).orderBy('slug').execute(),
        tombstones: await db.selectFrom('sync_tombstones').select(['entity', 'entity_id', 'hlc', 'writer']).orderBy('entity').orderBy('entity_id').execute(),
        versions: await db.selectFrom('sync_versions').select(['entity', 'entity_id', 'field', 'hlc', 'writer']).orderBy('entity').orderBy('entity_id').orderBy('field').execute(),
      };
    };
    const fromWhole = await replay(whole);
    expect(fromWhole.nodes.map((n) => [n.id, n.label, n.status])).toEqual([['n1', 'd', 'active']]);
    expect(fromWhole.tombstones.map((t) => t.entity_id)).toEqual(['n2', 'r1']);
    expect(await replay(compacted)).toEqual(fromWhole);
  });
});
