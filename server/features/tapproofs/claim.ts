import type { TapProofFailure } from './registry.ts';
import type { TapProofTagRow } from './repo.ts';

/** The webhook event for a tag URL whose proof failed (docs/webhooks.md). */
export const TAP_UNVERIFIED_EVENT = 'node.tap_unverified';

/**
 * A tag scan's proof as checked before recording (cryptography only), settled by the scan
 * writer inside the batch's transaction: the counter claimed, or the failure's policy looked up
 * and its event written. The writer fills in `verified`, `reason` and `refused` in place.
 */
export interface TapClaim {
  kind: string;
  org_id: string;
  node_id: string;
  slug: string;
  uid: string | null;
  counter: number | null;
  key_version: number | null;
  /** The kind proves the tap (false: evidence only, see TapProofKind.proves): an accepted claim then stays nfc_unverified. */
  proves: boolean;
  /** Null when the proof checked out so far (the counter is still to be claimed). */
  reason: TapProofFailure | null;
  /** The scan would serve content (not a status page): a 'refuse' policy may withhold it. */
  refusable: boolean;
  verified?: boolean;
  refused?: boolean;
}

/** Why a valid proof's counter was not accepted, from the tag's row (or its absence). */
export function refusalReason(tag: Pick<TapProofTagRow, 'node_id'> | undefined, nodeId: string): TapProofFailure {
  if (!tag) return 'unknown_tag';
  if (tag.node_id !== nodeId) return 'other_node';
  // Not above the last accepted, or the tag was re-keyed since (the MAC is from its old key).
  return 'replayed';
}

/** The node.tap_unverified event's data: no key material, nothing the URL did not carry. */
export function tapUnverifiedEvent(claim: TapClaim, at: string): Record<string, unknown> {
  return {
    node: { id: claim.node_id, slug: claim.slug },
    kind: claim.kind,
    reason: claim.reason,
    uid: claim.uid,
    counter: claim.counter,
    timestamp: at,
  };
}
