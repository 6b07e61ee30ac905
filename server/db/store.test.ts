import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { openTestStore, type TestStore } from '../../test/support/stores.ts';
import { needs } from '../../test/support/system.ts';
import type { SqliteStore } from './sqliteStore.ts';
import type { Executor } from './store.ts';

const backends = [
  { dialect: 'sqlite' as const, skip: null },
  { dialect: 'postgres' as const, skip: needs.postgres() },
];

for (const { dialect, skip } of backends) {
  describe.skipIf(skip !== null)(`store on ${dialect}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    let t: TestStore | undefined;
    afterEach(async () => {
      await t?.close();
      t = undefined;
    });

    const org = (id: string) => ({ id, name: `Org ${id}`, created_at: '2026-11-25T00:00:00.000Z' });

    it('commits a transaction and runs its after-commit callbacks only then', async () => {
      t = await openTestStore(dialect);
      const { store } = t;
      const seen: string[] = [];
      await store.transaction(async (tx) => {
        await tx.insertInto('organizations').values(org('a')).execute();
        store.afterCommit(tx, () => seen.push('committed'));
        seen.push('inside');
      });
      expect(seen).toEqual(['inside', 'committed']);
      const rows = await store.db.selectFrom('organizations').select(['id', 'name']).execute();
      expect(rows).toEqual([{ id: 'a', name: 'Org a' }]);
    });

    it('rolls back when the callback throws, and drops its after-commit callbacks', async () => {
      t = await openTestStore(dialect);
      const { store } = t;
      const seen: string[] = [];
      await expect(
        store.transaction(async (tx) => {
          await tx.insertInto('organizations').values(org('b')).execute();
          store.afterCommit(tx, () => seen.push('committed'));
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');
      expect(seen).toEqual([]);
      expect(await store.db.selectFrom('organizations').select('id').execute()).toEqual([]);
    });

    it('refuses a query on the root connection from inside a transaction', async () => {
      t = await openTestStore(dialect);
      const { store } = t;
      await expect(
        store.transaction(async () => {
          await store.db.selectFrom('organizations').select('id').execute();
        }),
      ).rejects.toThrow(/inside a transaction/);
      // and the store still works afterwards
      await store.transaction(async (tx) => {
        await tx.insertInto('organizations').values(org('c')).execute();
      });
      expect(await store.db.selectFrom('organizations').select('id').execute()).toEqual([{ id: 'c' }]);
    });

    it('runs concurrent transactions one after the other without mixing their rows', async () => {
      t = await openTestStore(dialect);
      const { store } = t;
      await Promise.all(
        ['d', 'e', 'f'].map((id) =>
          store.transaction(async (tx) => {
            await tx.insertInto('organizations').values(org(id)).execute();
            if (id === 'e') throw new Error('e fails');
          }).catch(() => undefined),
        ),
      );
      const ids = (await store.db.selectFrom('organizations').select('id').orderBy('id').execute()).map((r) => r.id);
      expect(ids).toEqual(['d', 'f']);
    });

    it('runs start hooks inside each transaction', async () => {
      t = await openTestStore(dialect);
      const { store } = t;
      store.onTransactionStart(async (tx) => {
        await tx.insertInto('settings').values({ key: 'hooked', value: 'yes' }).onConflict((oc) => oc.column('key').doNothing()).execute();
      });
      await store.transaction(async () => {});
      expect(await store.db.selectFrom('settings').select(['key', 'value']).execute()).toEqual([{ key: 'hooked', value: 'yes' }]);
    });

    it('commits a deferred-flush transaction like any other, and rolls one back that throws', async () => {
      t = await openTestStore(dialect);
      const { store } = t;
      await store.transaction(async (tx) => {
        await tx.insertInto('organizations').values(org('g')).execute();
      }, { flush: 'deferred' });
      await expect(
        store.transaction(async (tx) => {
          await tx.insertInto('organizations').values(org('h')).execute();
          throw new Error('h fails');
        }, { flush: 'deferred' }),
      ).rejects.toThrow('h fails');
      expect(await store.db.selectFrom('organizations').select('id').execute()).toEqual([{ id: 'g' }]);
    });

    it('returns 64-bit integer columns as numbers', async () => {
      t = await openTestStore(dialect);
      const row = await t.store.db.selectFrom('scan_cache_epoch').select(['id', 'epoch']).executeTakeFirstOrThrow();
      expect(row).toEqual({ id: 1, epoch: 0 });
    });
  });
}

describe('store on sqlite: a deferred-flush transaction', () => {
  const level = (store: SqliteStore) => Number(store.connection.pragma('synchronous', { simple: true }));

  it('commits at NORMAL and puts the connection back at its own level, also when it throws', async () => {
    const t = await openTestStore('sqlite');
    const store = t.store as SqliteStore;
    try {
      for (const own of [2, 3]) {
        store.connection.pragma(`synchronous = ${own}`);
        expect(await store.transaction(async () => level(store), { flush: 'deferred' })).toBe(1);
        expect(level(store)).toBe(own);
        expect(await store.transaction(async () => level(store))).toBe(own);
        await expect(store.transaction(async () => Promise.reject(new Error('boom')), { flush: 'deferred' })).rejects.toThrow('boom');
        expect(level(store)).toBe(own);
      }
      // A weaker level is left alone.
      store.connection.pragma('synchronous = OFF');
      expect(await store.transaction(async () => level(store), { flush: 'deferred' })).toBe(0);
    } finally {
      await t.close();
    }
  });

  it('keeps other callers off the connection until the level is back', async () => {
    const t = await openTestStore('sqlite');
    const store = t.store as SqliteStore;
    try {
      const seen: number[] = [];
      await Promise.all([
        store.transaction(async (tx) => {
          await tx.insertInto('organizations').values({ id: 'a', name: 'A', created_at: '2026-11-25T00:00:00.000Z' }).execute();
        }, { flush: 'deferred' }),
        store.transaction(async () => {
          seen.push(level(store));
        }),
      ]);
      expect(seen).toEqual([2]);
    } finally {
      await t.close();
    }
  });
});

describe.skipIf(needs.postgres() !== null)('store on postgres: a deferred-flush transaction', () => {
  it('turns synchronous_commit off for that transaction only', async () => {
    const t = await openTestStore('postgres');
    try {
      const show = async (tx: Executor) => (await sql<{ synchronous_commit: string }>`SHOW synchronous_commit`.execute(tx)).rows[0]!.synchronous_commit;
      expect(await t.store.transaction(show, { flush: 'deferred' })).toBe('off');
      expect(await t.store.transaction(show)).toBe('on');
    } finally {
      await t.close();
    }
  });
});

describe('store on sqlite: transactions stay within one event-loop turn', () => {
  it('rolls back a transaction that awaited real I/O', async () => {
    const t = await openTestStore('sqlite');
    try {
      await expect(
        t.store.transaction(async (tx) => {
          await tx.insertInto('organizations').values({ id: 'x', name: 'X', created_at: '2026-11-25T00:00:00.000Z' }).execute();
          await new Promise((resolve) => setTimeout(resolve, 1));
          // A loaded machine can run that timer in the loop turn it was set in; the turn has
          // surely ended once an immediate queued after the store's own has run.
          await new Promise((resolve) => setImmediate(resolve));
        }),
      ).rejects.toThrow(/awaited I\/O/);
      expect(await t.store.db.selectFrom('organizations').select('id').execute()).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
