/**
 * Sync on PostgreSQL with several processes on one database (issue 19): each "process" is a store
 * with its own pool, capture and clock, as `waymark serve --database …` processes are.
 */
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { freshPostgresDatabase } from '../../../test/support/stores.ts';
import { needs } from '../../../test/support/system.ts';
import { changeCapture } from '../../db/changeCapture.ts';
import { PostgresStore } from '../../db/postgresStore.ts';
import type { Executor } from '../../db/store.ts';
import { ManualClock } from '../../platform/clock.ts';
import { formatHlc } from '../../platform/hlc.ts';
import type { PushInput } from '../../schemas/sync.ts';
import { ChangeApplier } from './apply.ts';
import { RemoteChanges } from './changes.ts';
import { LeaseRegistry } from './registry.ts';
import { ReplicationRepo, SyncRepo } from './repo.ts';

const T0 = Date.parse('2026-11-21T12:00:00.000Z');
const iso = new Date(T0).toISOString();

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** `n` processes on one fresh database, sharing the instance's writer id, each with its own clock. */
async function processes(n: number, clockOffsets: number[] = []) {
  const database = await freshPostgresDatabase();
  cleanups.push(() => database.drop());
  const out = [];
  for (let i = 0; i < n; i++) {
    const store = await PostgresStore.open(database.url, { poolSize: 4 });
    cleanups.push(() => store.close());
    const clock = new ManualClock(T0 + (clockOffsets[i] ?? 0));
    const capture = await changeCapture(store, () => clock.now());
    capture.writer = 'remote/1';
    const rows = new ReplicationRepo('postgres');
    const repo = new SyncRepo('postgres');
    const registry = new LeaseRegistry(store, repo, clock);
    const applier = new ChangeApplier(rows, capture);
    const remote = new RemoteChanges({ store, rows, repo, registry, applier, capture, now: () => new Date(clock.now()).toISOString() });
    out.push({ store, clock, capture, rows, repo, registry, applier, remote });
  }
  await out[0]!.store.db.insertInto('organizations').values({ id: 'org', name: 'Org', created_at: iso }).execute();
  return out;
}

async function addNode(tx: Executor, id: string, slug: string): Promise<void> {
  await tx.insertInto('slugs').values({ slug, org_id: 'org', node_id: id, minted_at: iso }).execute();
  await tx.insertInto('nodes').values({ id, org_id: 'org', slug, label: 'one', function_type: 'redirect', payload_json: '{}', status: 'active', created_at: iso, updated_at: iso }).execute();
}

const addTemplate = (tx: Executor, id: string) =>
  tx.insertInto('templates').values({ id, org_id: 'org', name: id, function_type: 'redirect', payload_json: '{}', created_at: iso, updated_at: iso }).execute();

/** Resolves once some backend waits for a lock (a transaction is blocked behind another). */
async function someoneWaitsForALock(db: Executor): Promise<void> {
  for (;;) {
    const r = await sql<{ n: number }>`SELECT COUNT(*)::int AS n FROM pg_locks WHERE NOT granted`.execute(db);
    if (r.rows[0]!.n > 0) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** A transaction held open until `release` is called. */
function heldOpen(store: PostgresStore, work: (tx: Executor) => Promise<void>) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let ready!: () => void;
  const started = new Promise<void>((r) => (ready = r));
  const done = store.transaction(async (tx) => {
    await work(tx);
    ready();
    await gate;
  });
  return { started, release, done };
}

describe.skipIf(needs.postgres() !== null)('sync on PostgreSQL, several processes on one database', () => {
  it('hands out unique HLCs that keep increasing across processes, whatever their clocks', async () => {
    // Process 1's clock is 10 s ahead of process 0's.
    const [a, b] = await processes(2, [0, 10_000]);
    await a!.store.transaction((tx) => addNode(tx, 'n1', 'AAAAAAAA'));
    await b!.store.transaction((tx) => tx.updateTable('nodes').set({ label: 'from-b' }).where('id', '=', 'n1').execute());
    // A later write through the process whose clock is behind still wins.
    await a!.store.transaction((tx) => tx.updateTable('nodes').set({ label: 'from-a' }).where('id', '=', 'n1').execute());
    const label = await a!.store.db.selectFrom('sync_versions').select('hlc').where('entity_id', '=', 'n1').where('field', '=', 'label').executeTakeFirstOrThrow();
    const last = await a!.store.db.selectFrom('sync_outbox').select(['hlc', 'fields']).orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow();
    expect(JSON.parse(last.fields)).toEqual({ label: 'from-a' });
    expect(label.hlc).toBe(last.hlc);
    expect(last.hlc > formatHlc(T0 + 10_000, 0)).toBe(true);

    // Many concurrent transactions in both processes: no (hlc, writer) twice, HLC order = seq order.
    await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 ? a! : b!).store.transaction(async (tx) => {
        for (let k = 0; k < 4; k++) await addTemplate(tx, `t${i}-${k}`);
      })),
    );
    const rows = await a!.store.db.selectFrom('sync_outbox').select(['seq', 'hlc', 'writer']).orderBy('seq').execute();
    expect(rows).toHaveLength(3 + 48);
    expect(new Set(rows.map((r) => `${r.hlc}/${r.writer}`)).size).toBe(rows.length);
    const hlcs = rows.map((r) => r.hlc);
    expect([...hlcs].sort()).toEqual(hlcs);
  });

  it('numbers the feed in commit order: a reader by seq never passes a transaction that commits late', async () => {
    const [a, b] = await processes(2);
    // Process 0 writes first but commits last.
    const slow = heldOpen(a!.store, async (tx) => {
      await addTemplate(tx, 'slow');
    });
    await slow.started;
    await b!.store.transaction((tx) => addTemplate(tx, 'fast'));
    const first = await b!.remote.changes('org', 'site/1', undefined, 100);
    expect(first.changes.map((c) => c.entity_id)).toEqual(['fast']);
    slow.release();
    await slow.done;
    const next = await b!.remote.changes('org', 'site/1', first.next_cursor, 100);
    expect(next.changes.map((c) => c.entity_id)).toEqual(['slow']);
    expect(next.changes[0]!.seq).toBeGreaterThan(first.changes[0]!.seq);
  });

  it('applies a remote edit after a local write in progress commits, and the newer version wins', async () => {
    const [a, b] = await processes(2);
    await a!.store.transaction((tx) => addNode(tx, 'n1', 'AAAAAAAB'));
    // Process 0: a local edit in progress (row locked, versions not yet written).
    const local = heldOpen(a!.store, async (tx) => {
      await tx.updateTable('nodes').set({ label: 'local' }).where('id', '=', 'n1').execute();
    });
    await local.started;
    // Process 1 applies a site's edit of the same field, made earlier (older HLC).
    const conflicts: string[] = [];
    const applying = b!.store.transaction((tx) =>
      b!.applier.apply(tx, { seq: 1, entity: 'node', entity_id: 'n1', op: 'upsert', fields: { label: 'remote' }, hlc: formatHlc(T0 - 1000, 0), writer: 'site/1', group: null }, {
        orgId: 'org',
        now: iso,
        conflict: async (kind) => {
          conflicts.push(kind);
        },
      }),
    );
    await someoneWaitsForALock(a!.store.db);
    local.release();
    await local.done;
    await applying;
    // Without the lock, the site's older value would have overwritten the row while the version
    // said the local write won: the remote and its sites would disagree for good.
    const node = await a!.store.db.selectFrom('nodes').select('label').where('id', '=', 'n1').executeTakeFirstOrThrow();
    expect(node.label).toBe('local');
    const unapplied = await a!.store.db.selectFrom('sync_unapplied').select(['writer', 'fields']).execute();
    expect(unapplied).toEqual([{ writer: 'site/1', fields: '{"label":"remote"}' }]);
  });

  it('a push retried through another process while the first is applying is applied once, its conflict logged once', async () => {
    const [a, b] = await processes(2);
    await a!.registry.register('org', { site_id: 'site', incarnation: '1', name: 'Site', token: null, next_token: 'tok-1', claims: [] });
    await a!.store.transaction((tx) => addNode(tx, 'n1', 'AAAAAAAC'));
    // The remote deleted n1; the site edited it later (offline): the edit is logged as a conflict.
    await a!.store.transaction(async (tx) => {
      await tx.updateTable('slugs').set({ deleted_at: iso }).where('slug', '=', 'AAAAAAAC').execute();
      await tx.deleteFrom('nodes').where('id', '=', 'n1').execute();
    });
    a!.clock.advance(1000);
    b!.clock.advance(1000);
    const push: PushInput = {
      site_id: 'site',
      incarnation: '1',
      token: 'tok-1',
      next_token: 'tok-2',
      after_seq: 0,
      changes: [{ seq: 1, entity: 'node', entity_id: 'n1', op: 'upsert', fields: { label: 'late' }, hlc: formatHlc(T0 + 500, 0), writer: 'site/1', group: 'g' }],
      scans: [],
    };
    // The first push holds the site's lock (its transaction is open) while the retry arrives.
    const held = heldOpen(a!.store, (tx) => a!.repo.lockSite(tx, 'site'));
    await held.started;
    const results = Promise.all([a!.remote.push('org', push), b!.remote.push('org', push)]);
    await someoneWaitsForALock(a!.store.db);
    held.release();
    await held.done;
    expect((await results).map((r) => r.acked_seq)).toEqual([1, 1]);
    const conflicts = await a!.store.db.selectFrom('sync_conflicts').select('kind').execute();
    expect(conflicts).toEqual([{ kind: 'edit_after_delete' }]);
  });
});
