import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../db/database.ts';
import { SqliteStore } from '../../db/sqliteStore.ts';
import { ManualClock } from '../../platform/clock.ts';
import { AppError } from '../../platform/errors.ts';
import { FORKED_ERROR, UNKNOWN_INCARNATION_ERROR } from '../../schemas/sync.ts';
import { insertOrg } from '../../../test/support/sqliteOrg.ts';
import { BLOCK_SIZE, encode40, permute, SlugAllocator, SlugsRepo } from '../slugs/index.ts';
import { blockOfSlug, LeaseRegistry } from './registry.ts';
import { SyncRepo } from './repo.ts';

const slugAt = (block: number, offset: number) => encode40(permute(block * BLOCK_SIZE + offset));

async function setup() {
  const db = openDatabase(':memory:');
  const clock = new ManualClock();
  const orgA = insertOrg(db, 'A');
  const orgB = insertOrg(db, 'B');
  const store = new SqliteStore(db);
  const registry = new LeaseRegistry(store, new SyncRepo('sqlite'), clock);
  const register = (org: string, site: string, inc: string, token: string | null, next: string, claims: number[] = []) =>
    registry.register(org, { site_id: site, incarnation: inc, name: site, token, next_token: next, claims });
  return { db, store, clock, registry, orgA, orgB, register };
}

async function errorOf(fn: () => Promise<unknown>): Promise<AppError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected an error');
}

describe('LeaseRegistry.validateSlug', () => {
  it('accepts slugs from the site\'s own blocks and refuses everything else', async () => {
    const { registry, orgA, orgB, register } = await setup();
    await register(orgA, 'site-one-0001', 'inc-one-0001', null, 'tok-one-0001');
    await register(orgA, 'site-two-0001', 'inc-two-0001', null, 'tok-two-0001');
    await register(orgB, 'site-org-b-01', 'inc-org-b-01', null, 'tok-org-b-01');
    const [mine] = (await registry.lease(orgA, { site_id: 'site-one-0001', incarnation: 'inc-one-0001', token: 'tok-one-0001', next_token: 'tok-one-0002', want: 1 })).blocks;
    const [theirs] = (await registry.lease(orgA, { site_id: 'site-two-0001', incarnation: 'inc-two-0001', token: 'tok-two-0001', next_token: 'tok-two-0002', want: 1 })).blocks;

    for (const offset of [0, 1, 4242, BLOCK_SIZE - 1]) {
      expect(await registry.validateSlug(orgA, 'site-one-0001', slugAt(mine!, offset))).toEqual({ ok: true, block: mine, incarnation: 'inc-one-0001' });
    }
    // Case and Crockford aliases do not matter.
    expect((await registry.validateSlug(orgA, 'site-one-0001', slugAt(mine!, 7).toLowerCase())).ok).toBe(true);
    expect(await registry.validateSlug(orgA, 'site-one-0001', slugAt(theirs!, 0))).toEqual({ ok: false, reason: 'leased_to_other_site' });
    // The right site id under another organization's key is refused too.
    expect(await registry.validateSlug(orgB, 'site-one-0001', slugAt(mine!, 0))).toEqual({ ok: false, reason: 'leased_to_other_site' });
    const unleased = [...Array(50).keys()].map((i) => (mine! + 1 + i) % 2 ** 24).find((b) => b !== theirs)!;
    expect(await registry.validateSlug(orgA, 'site-one-0001', slugAt(unleased, 3))).toEqual({ ok: false, reason: 'not_leased' });
    expect(await registry.validateSlug(orgA, 'site-one-0001', 'ABC')).toEqual({ ok: false, reason: 'malformed' });
    expect(await registry.validateSlug(orgA, 'site-one-0001', 'UUUUUUUU')).toEqual({ ok: false, reason: 'malformed' });
  });

  it('blockOfSlug inverts the allocator', () => {
    for (const [block, offset] of [[0, 0], [1, 65535], [2 ** 24 - 1, 12], [123456, 999]] as const) {
      expect(blockOfSlug(slugAt(block, offset))).toBe(block);
    }
  });
});

describe('LeaseRegistry leases and fencing', () => {
  it('grants distinct blocks; a retried call gets the same blocks, not new ones', async () => {
    const { registry, orgA, register } = await setup();
    await register(orgA, 'site-one-0001', 'inc-one-0001', null, 't1-aaaaaaaa');
    const first = await registry.lease(orgA, { site_id: 'site-one-0001', incarnation: 'inc-one-0001', token: 't1-aaaaaaaa', next_token: 't2-aaaaaaaa', want: 2 });
    expect(first.blocks).toHaveLength(2);
    const retry = await registry.lease(orgA, { site_id: 'site-one-0001', incarnation: 'inc-one-0001', token: 't1-aaaaaaaa', next_token: 't2-aaaaaaaa', want: 2 });
    expect(retry).toEqual(first);
    const next = await registry.lease(orgA, { site_id: 'site-one-0001', incarnation: 'inc-one-0001', token: 't2-aaaaaaaa', next_token: 't3-aaaaaaaa', want: 3 });
    expect(next.blocks).toHaveLength(3);
    expect(new Set([...first.blocks, ...next.blocks]).size).toBe(5);
  });

  it('refuses a stale token as a fork (409), also for a second copy registering the same incarnation', async () => {
    const { registry, orgA, register } = await setup();
    await register(orgA, 'site-one-0001', 'inc-one-0001', null, 't1-aaaaaaaa');
    await registry.lease(orgA, { site_id: 'site-one-0001', incarnation: 'inc-one-0001', token: 't1-aaaaaaaa', next_token: 't2-aaaaaaaa', want: 1 });
    // A copy of the data from before the lease still holds t1 and picks its own next token.
    const stale = await errorOf(() =>
      registry.lease(orgA, { site_id: 'site-one-0001', incarnation: 'inc-one-0001', token: 't1-aaaaaaaa', next_token: 't2-bbbbbbbb', want: 1 }),
    );
    expect([stale.status, stale.message]).toEqual([409, FORKED_ERROR]);
    const copy = await errorOf(() => register(orgA, 'site-one-0001', 'inc-one-0001', null, 'tX-cccccccc'));
    expect([copy.status, copy.message]).toEqual([409, FORKED_ERROR]);
    // The lease of an unknown incarnation or another organization's site is refused.
    const unknown = await errorOf(() => registry.lease(orgA, { site_id: 'site-one-0001', incarnation: 'inc-unknown1', token: null, next_token: 't1-dddddddd', want: 1 }));
    expect([unknown.status, unknown.message]).toEqual([409, UNKNOWN_INCARNATION_ERROR]);
    expect((await errorOf(() => register('no-such-org', 'site-one-0001', 'inc-two-0001', null, 't1-eeeeeeee'))).status).toBe(409);
  });

  it('claims: free blocks are confirmed, blocks held elsewhere are refused with the holder', async () => {
    const { db, store, clock, registry, orgA, register } = await setup();
    // The remote's own standalone block.
    const own = new SlugAllocator(new SlugsRepo('sqlite'), clock, () => 'standalone', (tx, b) => registry.isTaken(tx, b));
    await store.transaction((tx) => own.mint(tx, orgA, 'node-1'));
    const ownBlock = (db.prepare('SELECT block FROM slug_blocks').pluck().get() as number);
    const one = await register(orgA, 'site-one-0001', 'inc-one-0001', null, 't1-aaaaaaaa', [10, 11, ownBlock]);
    expect(one.claims).toEqual({ accepted: [10, 11], rejected: [{ block: ownBlock, reason: 'held_by_remote' }] });
    // Idempotent for the same incarnation; another incarnation of the same site, another site.
    expect((await register(orgA, 'site-one-0001', 'inc-one-0001', 't1-aaaaaaaa', 't2-aaaaaaaa', [10])).claims.accepted).toEqual([10]);
    expect((await register(orgA, 'site-one-0001', 'inc-one-0002', null, 't1-bbbbbbbb', [10])).claims.rejected).toEqual([{ block: 10, reason: 'held_by_other_incarnation' }]);
    expect((await register(orgA, 'site-two-0001', 'inc-two-0001', null, 't1-cccccccc', [11, 12])).claims).toEqual({
      accepted: [12],
      rejected: [{ block: 11, reason: 'held_by_other_site' }],
    });
  });

  it("the remote's own allocator skips blocks taken by sites", async () => {
    const { db, store, clock, registry, orgA, register } = await setup();
    await register(orgA, 'site-one-0001', 'inc-one-0001', null, 't1-aaaaaaaa');
    await registry.lease(orgA, { site_id: 'site-one-0001', incarnation: 'inc-one-0001', token: 't1-aaaaaaaa', next_token: 't2-aaaaaaaa', want: 8 });
    // The first five random picks are reported taken (as if leased): the allocator must move on.
    const refused: number[] = [];
    const own = new SlugAllocator(new SlugsRepo('sqlite'), clock, () => 'standalone', (tx, b) => {
      if (refused.length < 5) {
        refused.push(b);
        return true;
      }
      return registry.isTaken(tx, b);
    });
    await store.transaction((tx) => own.mint(tx, orgA, 'node-1'));
    const ownBlock = db.prepare("SELECT block FROM slug_blocks WHERE source = 'local'").pluck().get() as number;
    expect(refused).toHaveLength(5);
    expect(refused).not.toContain(ownBlock);
    expect(await registry.isTaken(store.db, ownBlock)).toBe(false);
  });
});
