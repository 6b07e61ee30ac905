// The first start's organization and admin key, on both backends. On PostgreSQL several
// processes may start together on one empty database: each has its own pool here, as they would.
import { afterEach, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../db/postgresStore.ts';
import { ManualClock } from '../../platform/clock.ts';
import { backends, openTestStore, type TestStore } from '../../../test/support/nodeStores.ts';
import { freshPostgresDatabase } from '../../../test/support/stores.ts';
import { KeysRepo } from './repo.ts';
import { KeyService } from './service.ts';

const clock = new ManualClock('2026-11-26T10:00:00.000Z');

for (const { dialect, skip } of backends) {
  describe.skipIf(skip !== null)(`first start on ${dialect}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    let t: TestStore | undefined;
    afterEach(async () => {
      await t?.close();
      t = undefined;
    });

    it('creates the default organization and an admin key once; later starts and org create add none / ordinary ones', async () => {
      t = await openTestStore(dialect);
      const keys = new KeyService(t.store, new KeysRepo(), clock);
      const first = await keys.createFirstOrgWithKey('Default organization', 'First key');
      expect(first?.key.admin).toBe(1);
      expect(await keys.createFirstOrgWithKey('Default organization', 'First key')).toBeUndefined();
      const second = await keys.createOrgWithKey('Acme', 'First key');
      expect(second.key.admin).toBe(0);
      expect((await keys.listOrgs()).map((o) => o.name).sort()).toEqual(['Acme', 'Default organization']);
    });
  });
}

describe.skipIf(backends[1]!.skip !== null)('first start of several processes on one empty PostgreSQL database', () => {
  it('makes exactly one default organization and one admin key', async () => {
    const database = await freshPostgresDatabase();
    const stores: PostgresStore[] = [];
    try {
      for (let i = 0; i < 4; i++) stores.push(await PostgresStore.open(database.url, { poolSize: 2 }));
      const results = await Promise.all(stores.map((store) => new KeyService(store, new KeysRepo(), clock).createFirstOrgWithKey('Default organization', 'First key')));
      expect(results.filter((r) => r !== undefined)).toHaveLength(1);
      const orgs = await stores[0]!.db.selectFrom('organizations').select('id').execute();
      expect(orgs).toHaveLength(1);
      const admins = await stores[0]!.db.selectFrom('api_keys').select('id').where('admin', '=', 1).execute();
      expect(admins).toHaveLength(1);
    } finally {
      for (const store of stores) await store.close();
      await database.drop();
    }
  });
});
