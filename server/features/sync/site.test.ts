import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../db/database.ts';
import { SqliteStore } from '../../db/sqliteStore.ts';
import { ManualClock } from '../../platform/clock.ts';
import { AppError } from '../../platform/errors.ts';
import { insertOrg } from '../../../test/support/sqliteOrg.ts';
import { SlugAllocator, SlugsRepo } from '../slugs/index.ts';
import { ForkedError, type RemoteApi, RemoteRefusedError } from './client.ts';
import { LeaseRegistry } from './registry.ts';
import { SyncRepo } from './repo.ts';
import { SiteSync } from './site.ts';
import { FORKED_ERROR, UNKNOWN_INCARNATION_ERROR } from '../../schemas/sync.ts';

const quiet = { info: () => {}, error: () => {} };

/** A remote in memory: the real registry behind a client that maps its errors like HTTP does. */
function memoryRemote() {
  const db = openDatabase(':memory:');
  const clock = new ManualClock();
  const orgId = insertOrg(db, 'Remote org');
  const registry = new LeaseRegistry(new SqliteStore(db), new SyncRepo('sqlite'), clock);
  const wrap = async <T>(fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof AppError && (err.message === FORKED_ERROR || err.message === UNKNOWN_INCARNATION_ERROR)) throw new ForkedError(err.message);
      if (err instanceof AppError) throw new RemoteRefusedError(err.status, err.message);
      throw err;
    }
  };
  const client: RemoteApi = {
    register: (body) => wrap(() => registry.register(orgId, body)),
    lease: (body) => wrap(() => registry.lease(orgId, body)),
    push: () => Promise.reject(new Error('not used here')),
    changes: () => Promise.reject(new Error('not used here')),
    resolveConflict: () => Promise.reject(new Error('not used here')),
    conflicts: () => Promise.reject(new Error('not used here')),
  };
  return { db, registry, client, orgId };
}

async function memorySite(client: RemoteApi) {
  const db = openDatabase(':memory:');
  const clock = new ManualClock();
  const repo = new SyncRepo('sqlite');
  const store = new SqliteStore(db);
  const site = await SiteSync.open({ store, repo, clock, logger: quiet, remoteUrl: 'http://remote.test', client, reserveBlocks: 2, siteName: 'test' });
  return { db, store, clock, repo, site };
}

describe('SiteSync', () => {
  it('a standalone block retired by a new incarnation and held by another site is still reported as a conflict', async () => {
    const remote = memoryRemote();
    const other = await memorySite(remote.client);
    await other.site.step();
    const [taken] = other.db.prepare("SELECT block FROM slug_blocks WHERE source = 'lease'").pluck().all() as number[];

    // This instance ran standalone with that same block and minted 5 slugs from it.
    const { db, site } = await memorySite(remote.client);
    db.prepare("INSERT INTO slug_blocks (block, next_offset, source, acquired_at) VALUES (?, 5, 'local', 'x')").run(taken);
    await site.startNewIncarnation('test: copied data');
    await site.step();
    expect((await site.status()).conflicts).toEqual([
      expect.objectContaining({ kind: 'block_conflict', detail: expect.objectContaining({ block: taken, slugs_minted: 5, reason: 'held_by_other_site' }) }),
    ]);
    expect((await site.status()).reserve.blocks).toBe(2);
  });

  it('a new incarnation re-records its retired blocks at the remote (a remote restored from backup relearns them)', async () => {
    const first = memoryRemote();
    const { db, site } = await memorySite(first.client);
    await site.step();
    const held = db.prepare("SELECT block FROM slug_blocks WHERE source = 'lease' ORDER BY block").pluck().all() as number[];

    // A remote that lost its records: it does not know the incarnation, so the site pairs again
    // as a new incarnation and its claims re-record every block it ever held.
    const restored = memoryRemote();
    (site as unknown as { client: RemoteApi }).client = restored.client;
    const before = site.incarnation;
    await site.step();
    expect(site.incarnation).not.toBe(before);
    const recorded = restored.db.prepare('SELECT block FROM sync_leases WHERE site_id = ? ORDER BY block').pluck().all(site.siteId) as number[];
    for (const b of held) expect(recorded).toContain(b);
    // The retired blocks stay retired: slugs come only from the two new blocks.
    const minting = new SlugAllocator(new SlugsRepo('sqlite'), new ManualClock(), site.slugSource);
    const slugBlock = () => db.prepare("SELECT block FROM slug_blocks WHERE source = 'lease' AND next_offset > 0 AND next_offset < 65536").pluck().all() as number[];
    await new SqliteStore(db).transaction((tx) => minting.mint(tx, 'org', 'n1'));
    expect(held).not.toContain(slugBlock()[0]);
    expect((await site.status()).conflicts).toEqual([]);
  });

  it('refuses a batch the reserve cannot cover, counting batches still generating', async () => {
    const { site, db, store } = await memorySite(memoryRemote().client);
    await expect(site.assertCanMint(store.db, 1)).rejects.toThrow(/^No slugs left in this site's reserve: this site is not paired with http:\/\/remote.test yet/);
    db.prepare("INSERT INTO slug_blocks (block, next_offset, source, acquired_at) VALUES (1, 65526, 'lease', 'x')").run();
    await expect(site.assertCanMint(store.db, 10)).resolves.toBeUndefined();
    await expect(site.assertCanMint(store.db, 11)).rejects.toThrow(/has 10 slugs left, not enough for 11/);
  });
});
