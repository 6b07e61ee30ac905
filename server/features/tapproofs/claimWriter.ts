import type { Database, Statement } from 'better-sqlite3';
import type { Executor } from '../../db/store.ts';
import { refusalReason, type TapClaim } from './claim.ts';
import { TapProofRepo } from './repo.ts';

/**
 * Settles a tap claim inside the scan batch's transaction (scans/writer.ts, postgresWriter.ts),
 * so the counter moves if and only if the scan is recorded: the conditional UPDATE accepts a
 * counter above the last one (of two processes racing the same counter exactly one succeeds);
 * a failure reads the node's policy. True when the caller should write node.tap_unverified.
 */
export function prepareSqliteTapSettle(db: Database): (claim: TapClaim, at: string) => boolean {
  const claimStmt: Statement = db.prepare(
    `UPDATE tap_proof_tags SET last_counter = ?, updated_at = ?
      WHERE org_id = ? AND kind = ? AND uid = ? AND node_id = ? AND key_version = ? AND last_counter < ?`,
  );
  const tagStmt = db.prepare('SELECT node_id FROM tap_proof_tags WHERE org_id = ? AND kind = ? AND uid = ?');
  const policyStmt = db.prepare('SELECT policy FROM tap_proof_policies WHERE node_id = ?').pluck();
  return (claim, at) => {
    if (claim.reason === null && claim.uid !== null && claim.counter !== null && claim.key_version !== null) {
      const { changes } = claimStmt.run(claim.counter, at, claim.org_id, claim.kind, claim.uid, claim.node_id, claim.key_version, claim.counter);
      if (changes === 1) {
        claim.verified = claim.proves;
        return false;
      }
      claim.reason = refusalReason(tagStmt.get(claim.org_id, claim.kind, claim.uid) as { node_id: string } | undefined, claim.node_id);
    }
    claim.verified = false;
    claim.refused = claim.refusable && policyStmt.get(claim.node_id) === 'refuse';
    return true;
  };
}

/** The same on PostgreSQL, in the batch's transaction `tx`. */
export async function settleTapOnPostgres(tx: Executor, claim: TapClaim, at: string, repo = new TapProofRepo()): Promise<boolean> {
  if (claim.reason === null && claim.uid !== null && claim.counter !== null && claim.key_version !== null) {
    const key = { org_id: claim.org_id, kind: claim.kind, uid: claim.uid, node_id: claim.node_id, key_version: claim.key_version };
    if (await repo.claimCounter(tx, key, claim.counter, at)) {
      claim.verified = claim.proves;
      return false;
    }
    claim.reason = refusalReason(await repo.tag(tx, claim.org_id, claim.kind, claim.uid), claim.node_id);
  }
  claim.verified = false;
  claim.refused = claim.refusable && (await repo.policy(tx, claim.node_id)) === 'refuse';
  return true;
}
