import type { Store } from '../../db/store.ts';
import type { ReplicationRepo, SyncRepo } from './repo.ts';
import type { SealedFields } from './sealedFields.ts';

/** Set once every webhook change logged before sealing existed has its secrets sealed. */
const DONE = 'secrets.sync_log_sealed';
const PAGE = 200;

/**
 * The change log kept webhook secrets in clear before sealing existed (docs/decisions.md, "Webhook
 * secrets at rest"): seals them once, a page per transaction (a crash keeps what was sealed; clear
 * values still read meanwhile), then marks it done so later starts skip the scan.
 */
export async function sealLoggedSecrets(store: Store, rows: ReplicationRepo, settings: SyncRepo, sealed: SealedFields): Promise<number> {
  if ((await settings.getSetting(store.db, DONE)) !== undefined) return 0;
  let after = 0;
  let total = 0;
  for (;;) {
    const page = await store.transaction(async (tx) => {
      const changes = await rows.changesOf(tx, 'webhook', after, PAGE);
      for (const c of changes) {
        const fields = sealed.sealClear('webhook', c.entity_id, JSON.parse(c.fields) as Record<string, unknown>);
        if (fields) {
          await rows.setChangeFields(tx, c.seq, JSON.stringify(fields));
          total++;
        }
      }
      return changes;
    });
    if (page.length < PAGE) break;
    after = page[page.length - 1]!.seq;
  }
  await settings.setSetting(store.db, DONE, new Date().toISOString());
  return total;
}
