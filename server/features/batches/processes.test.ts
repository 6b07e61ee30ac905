// Many processes on one PostgreSQL database (issue 19): slugs minted once whichever process
// mints, serials reserved once, every batch generated once, and a batch whose process is
// SIGKILLed mid-generation finished by another process with no serial or node twice.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../db/postgresStore.ts';
import type { Store } from '../../db/store.ts';
import { insertOrg, nodeServices } from '../../../test/support/nodeStores.ts';
import { repoRoot } from '../../../test/support/server.ts';
import { freshPostgresDatabase } from '../../../test/support/stores.ts';
import { needs } from '../../../test/support/system.ts';
import { systemClock } from '../../platform/clock.ts';
import { BLOCK_SIZE, decode40, unpermute } from '../slugs/index.ts';

/** Waits for a condition, checking every 20 ms, failing after `ms`. */
async function until(what: string, check: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const skip = needs.postgres();

describe.skipIf(skip !== null)(`processes sharing a PostgreSQL database${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  /** `n` stores on one fresh database: as many processes' connection pools. */
  async function processes(n: number): Promise<{ url: string; stores: Store[] }> {
    const database = await freshPostgresDatabase();
    cleanup.push(() => database.drop());
    const stores: Store[] = [];
    for (let i = 0; i < n; i++) {
      const store = await PostgresStore.open(database.url, { poolSize: 4 });
      cleanup.push(() => store.close());
      stores.push(store);
    }
    return { url: database.url, stores };
  }

  it('mints every slug once from many processes; a block another process is minting from is skipped', { timeout: 120_000 }, async () => {
    const { stores } = await processes(2);
    const orgId = await insertOrg(stores[0]!);
    const [a, b] = stores.map((s) => nodeServices(s, systemClock).slugs);
    const blockOf = (slug: string) => Math.floor(unpermute(decode40(slug)) / BLOCK_SIZE);
    const first = await stores[0]!.transaction((tx) => a!.mint(tx, orgId, 'node-0'));
    // Process A mints from that block in a transaction it keeps open; process B mints meanwhile
    // and commits before A does: it skipped A's locked block, and nothing else makes it wait (the
    // scan cache's epoch moves at commit, PostgreSQL migration 073).
    let release!: () => void;
    let aMinted!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const aHolds = new Promise<void>((resolve) => (aMinted = resolve));
    const fromA = stores[0]!.transaction(async (tx) => {
      const slug = await a!.mint(tx, orgId, 'node-a');
      aMinted();
      await held;
      return slug;
    });
    await aHolds;
    const fromB = await stores[1]!.transaction((tx) => b!.mint(tx, orgId, 'node-b'));
    release();
    expect(blockOf(await fromA)).toBe(blockOf(first));
    expect(blockOf(fromB)).not.toBe(blockOf(first));

    // Then 2 × 6 transactions of 25 slugs each, all at once.
    const minted = (
      await Promise.all(
        stores.flatMap((store, p) =>
          Array.from({ length: 6 }, (_, i) =>
            store.transaction(async (tx) => {
              const out: string[] = [];
              for (let k = 0; k < 25; k++) out.push(await [a, b][p]!.mint(tx, orgId, `n-${p}-${i}-${k}`));
              return out;
            }),
          ),
        ),
      )
    ).flat();
    expect(minted).toHaveLength(300);
    expect(new Set([...minted, first, await fromA, fromB]).size).toBe(303);
    const db = stores[0]!.db;
    expect(Number((await db.selectFrom('slugs').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)).toBe(303);
    // Every offset handed out is accounted for: nothing skipped or given twice within a block.
    const used = await db.selectFrom('slug_blocks').select((eb) => eb.fn.sum<number>('next_offset').as('n')).executeTakeFirstOrThrow();
    expect(Number(used.n)).toBe(303);
  });

  it('reserves disjoint serial ranges for batches created at once in several processes', { timeout: 60_000 }, async () => {
    const { stores } = await processes(3);
    const orgId = await insertOrg(stores[0]!);
    const created = await Promise.all(
      stores.flatMap((store) =>
        Array.from({ length: 4 }, (_, i) =>
          nodeServices(store, systemClock).batches.create(orgId, { label: `b${i}`, prefix: 'PAR', quantity: 10 + i, function_type: 'redirect' }),
        ),
      ),
    );
    const ranges = created.map((b) => [b.serial_start, b.serial_start + b.quantity - 1] as const).sort((x, y) => x[0] - y[0]);
    let next = 1;
    for (const [start, end] of ranges) {
      expect(start).toBe(next);
      next = end + 1;
    }
    expect(next - 1).toBe(3 * (10 + 11 + 12 + 13));
  });

  it('generates each batch once with generators in several processes at work together', { timeout: 120_000 }, async () => {
    const { stores } = await processes(3);
    const orgId = await insertOrg(stores[0]!);
    const services = stores.map((store, i) => nodeServices(store, systemClock, { generator: { owner: `p${i}`, chunkSize: 20, leaseMs: 30_000 } }));
    const batches = [];
    for (let i = 0; i < 4; i++) {
      batches.push(await services[i % 3]!.batches.create(orgId, { label: `b${i}`, prefix: `G${i}`, quantity: 120, function_type: 'redirect', base_payload: { url: 'https://example.com' } }));
    }
    for (const s of services) {
      s.generator.start();
      cleanup.push(() => s.generator.stop());
    }
    const db = stores[0]!.db;
    await until('every batch ready', async () => {
      const rows = await db.selectFrom('batches').select('status').execute();
      return rows.every((r) => r.status === 'ready');
    }, 100_000);
    for (const b of batches) {
      const nodes = await db.selectFrom('nodes').select(['serial_number', 'slug']).where('batch_id', '=', b.id).execute();
      expect(nodes).toHaveLength(120);
      expect(new Set(nodes.map((n) => n.serial_number)).size).toBe(120);
      expect(Math.min(...nodes.map((n) => n.serial_number!))).toBe(1);
    }
    const completed = await db.selectFrom('outbox_events').select('data_json').where('type', '=', 'batch.completed').execute();
    expect(completed.map((e) => (JSON.parse(e.data_json) as { id: string }).id).sort()).toEqual(batches.map((b) => b.id).sort());
    expect(Number((await db.selectFrom('slugs').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)).toBe(480);
  });

  it('finishes a 500-node batch whose generating process was SIGKILLed, with no serial or node twice', { timeout: 180_000 }, async () => {
    const { url, stores } = await processes(1);
    const store = stores[0]!;
    const orgId = await insertOrg(store);
    const survivor = nodeServices(store, systemClock, { generator: { owner: 'survivor', chunkSize: 50, leaseMs: 2_000 } });
    const batch = await survivor.batches.create(orgId, { label: 'Big', prefix: 'KIL', quantity: 500, function_type: 'redirect', base_payload: { url: 'https://example.com/k' } });

    // The worker generates in chunks of 10 and holds each lease for 2 s.
    const child = spawn(process.execPath, [join(repoRoot, 'test', 'support', 'batchWorker.ts'), url, 'doomed', '10', '2000'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    cleanup.push(async () => {
      child.kill('SIGKILL');
      await exited;
    });
    const progress = async () => (await survivor.batches.get(orgId, batch.id)).nodes_generated;
    await until(`the worker's first chunk (${output})`, async () => (await progress()) > 0);
    child.kill('SIGKILL');
    await exited;
    const atDeath = await survivor.batches.get(orgId, batch.id);
    expect(atDeath.status, 'killed while generating').toBe('generating');
    const held = await store.db.selectFrom('batches').select(['lease_owner']).where('id', '=', batch.id).executeTakeFirstOrThrow();
    expect(held.lease_owner).toBe('doomed');
    // Only whole chunks were committed.
    const count = async () => Number((await store.db.selectFrom('nodes').select((eb) => eb.fn.countAll().as('n')).where('batch_id', '=', batch.id).executeTakeFirstOrThrow()).n);
    expect(await count()).toBe(atDeath.nodes_generated);
    expect(atDeath.nodes_generated % 10).toBe(0);

    // Another process's generator waits out the dead lease, then finishes the batch.
    survivor.generator.start();
    cleanup.push(() => survivor.generator.stop());
    await until('the batch finished by the survivor', async () => (await survivor.batches.get(orgId, batch.id)).status === 'ready', 120_000);
    const nodes = await store.db.selectFrom('nodes').select(['serial', 'serial_number', 'slug']).where('batch_id', '=', batch.id).orderBy('serial_number').execute();
    expect(nodes.map((n) => n.serial_number)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
    expect(nodes[0]!.serial).toBe('KIL-001');
    expect(new Set(nodes.map((n) => n.slug)).size).toBe(500);
    const minted = Number((await store.db.selectFrom('slugs').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    expect(minted).toBe(500);
    const done = await store.db.selectFrom('batches').select(['lease_owner', 'lease_until', 'nodes_generated']).where('id', '=', batch.id).executeTakeFirstOrThrow();
    expect(done).toEqual({ lease_owner: null, lease_until: null, nodes_generated: 500 });
    const completed = await store.db.selectFrom('outbox_events').select('id').where('type', '=', 'batch.completed').execute();
    expect(completed).toHaveLength(1);
  });
});
