import { afterEach, describe, expect, it } from 'vitest';
import { openTestStore, type TestStore } from '../../../test/support/stores.ts';
import { needs } from '../../../test/support/system.ts';
import { changeCapture } from '../../db/changeCapture.ts';
import { InstanceKeys, WEBHOOK_DATA_KEY_SECRET } from '../../platform/instanceKeys.ts';
import { formatHlc } from '../../platform/hlc.ts';
import { MemorySecretStore } from '../../platform/secrets.ts';
import { ChangeApplier } from './apply.ts';
import { SiteChanges } from './changes.ts';
import { ReplicationRepo, SyncRepo } from './repo.ts';
import { SealedFields } from './sealedFields.ts';
import { sealLoggedSecrets } from './sealLog.ts';

const T0 = Date.parse('2026-11-26T12:00:00.000Z');
const open: TestStore[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

for (const { dialect, skip } of [
  { dialect: 'sqlite' as const, skip: null },
  { dialect: 'postgres' as const, skip: needs.postgres() },
]) {
  describe.skipIf(skip !== null)(`webhook secrets in the sync change log on ${dialect}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    it('are sealed as they are applied, sealed once where logged in clear before, and sent opened', async () => {
      const test = await openTestStore(dialect);
      open.push(test);
      const { store } = test;
      const capture = await changeCapture(store, () => T0);
      capture.writer = 'local/1';
      const orgId = 'org-1';
      const now = new Date(T0).toISOString();
      await store.db.insertInto('organizations').values({ id: orgId, name: 'Org', created_at: now }).execute();
      const cipher = new InstanceKeys(new MemorySecretStore(), null).cipher(WEBHOOK_DATA_KEY_SECRET);
      const sealed = new SealedFields(cipher);
      const rows = new ReplicationRepo(store.dialect);
      const settings = new SyncRepo(store.dialect);

      // An endpoint written by an older version: its row and its logged change hold the secret in clear.
      await store.db
        .insertInto('webhooks')
        .values({ id: 'wh_old', org_id: orgId, url: 'https://h.example.com/a', events_json: '["node.created"]', description: null, active: 1, secret: 'whsec_b2xk', previous_secret: null, previous_secret_expires_at: null, start_seq: 0, created_at: now, updated_at: now })
        .execute();
      // One arriving from the remote, in clear on the wire.
      const applier = new ChangeApplier(rows, capture, sealed);
      const fields = { url: 'https://h.example.com/b', events_json: '["node.created"]', description: null, active: 1, secret: 'whsec_bmV3', previous_secret: 'whsec_cHJldg==', previous_secret_expires_at: now, created_at: now, updated_at: now };
      await store.transaction((tx) =>
        applier.apply(tx, { seq: 1, entity: 'webhook', entity_id: 'wh_new', op: 'upsert', fields, hlc: formatHlc(T0 - 1000, 0), writer: 'remote/1', group: null }, { orgId, now, conflict: async () => {} }),
      );
      const stored = await store.db.selectFrom('webhooks').select(['secret', 'previous_secret']).where('id', '=', 'wh_new').executeTakeFirstOrThrow();
      expect(stored.secret).toMatch(/^enc1:/);
      expect(cipher.open(stored.secret, 'wh_new')).toBe('whsec_bmV3');
      expect(cipher.open(stored.previous_secret!, 'wh_new')).toBe('whsec_cHJldg==');

      const logged = async () =>
        (await store.db.selectFrom('sync_outbox').select(['entity_id', 'fields']).where('entity', '=', 'webhook').orderBy('seq').execute()).map((r) => ({
          id: r.entity_id,
          ...(JSON.parse(r.fields) as { secret?: string; previous_secret?: string | null }),
        }));
      const before = await logged();
      expect(before.find((r) => r.id === 'wh_old')?.secret).toBe('whsec_b2xk');

      expect(await sealLoggedSecrets(store, rows, settings, sealed)).toBeGreaterThanOrEqual(1);
      const after = await logged();
      for (const r of after) if (typeof r.secret === 'string') expect(r.secret).toMatch(/^enc1:/);
      expect(cipher.open(after.find((r) => r.id === 'wh_old')!.secret!, 'wh_old')).toBe('whsec_b2xk');
      // Once done, later starts skip it.
      expect(await sealLoggedSecrets(store, rows, settings, sealed)).toBe(0);

      // Pushed opened: the receiver seals them under its own key.
      const sent = await new SiteChanges(store, rows, settings, capture, sealed).nextChanges(orgId, 100);
      const old = sent.find((c) => c.entity_id === 'wh_old');
      expect(old?.fields.secret).toBe('whsec_b2xk');
    });
  });
}
