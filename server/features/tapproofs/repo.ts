import type { Executor } from '../../db/store.ts';
import type { TapProofPolicy } from '../../schemas/tapProofs.ts';

export interface TapProofTagRow {
  org_id: string;
  uid: string;
  kind: string;
  node_id: string;
  key_version: number;
  last_counter: number;
}

export type { TapProofPolicy };

/** SQL of the tap proof feature: registered tags (the replay guard) and per-node policies. */
export class TapProofRepo {
  /** Registers (or re-binds) a tag; its counter is kept, so URLs it wrote earlier stay refused. */
  async upsertTag(db: Executor, row: Omit<TapProofTagRow, 'last_counter'>, at: string): Promise<void> {
    await db
      .insertInto('tap_proof_tags')
      .values({ ...row, created_at: at, updated_at: at })
      .onConflict((oc) => oc.columns(['org_id', 'kind', 'uid']).doUpdateSet({ node_id: row.node_id, key_version: row.key_version, updated_at: at }))
      .execute();
  }

  /**
   * Accepts `counter` for the tag if it is above the last one accepted, in one conditional UPDATE:
   * of two processes racing the same counter, exactly one sees its row updated. True if accepted.
   */
  async claimCounter(db: Executor, key: { org_id: string; kind: string; uid: string; node_id: string; key_version: number }, counter: number, at: string): Promise<boolean> {
    const result = await db
      .updateTable('tap_proof_tags')
      .set({ last_counter: counter, updated_at: at })
      .where('org_id', '=', key.org_id)
      .where('kind', '=', key.kind)
      .where('uid', '=', key.uid)
      .where('node_id', '=', key.node_id)
      .where('key_version', '=', key.key_version)
      .where('last_counter', '<', counter)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async tag(db: Executor, orgId: string, kind: string, uid: string): Promise<TapProofTagRow | undefined> {
    return db
      .selectFrom('tap_proof_tags')
      .select(['org_id', 'uid', 'kind', 'node_id', 'key_version', 'last_counter'])
      .where('org_id', '=', orgId)
      .where('kind', '=', kind)
      .where('uid', '=', uid)
      .executeTakeFirst();
  }

  async tagsOfNode(db: Executor, nodeId: string): Promise<TapProofTagRow[]> {
    return db
      .selectFrom('tap_proof_tags')
      .select(['org_id', 'uid', 'kind', 'node_id', 'key_version', 'last_counter'])
      .where('node_id', '=', nodeId)
      .orderBy('uid')
      .execute();
  }

  async policy(db: Executor, nodeId: string): Promise<TapProofPolicy> {
    const row = await db.selectFrom('tap_proof_policies').select('policy').where('node_id', '=', nodeId).executeTakeFirst();
    return row?.policy === 'refuse' ? 'refuse' : 'serve';
  }

  async setPolicy(db: Executor, orgId: string, nodeId: string, policy: TapProofPolicy, at: string): Promise<void> {
    await db
      .insertInto('tap_proof_policies')
      .values({ node_id: nodeId, org_id: orgId, policy, updated_at: at })
      .onConflict((oc) => oc.column('node_id').doUpdateSet({ policy, updated_at: at }))
      .execute();
  }
}
