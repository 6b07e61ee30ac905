/**
 * Tap proof kinds: each folder of kinds/ checks one kind of tag's evidence in a scan URL (NTAG
 * 424 DNA's SUN message, …). A kind says whether a URL carries its parameters and checks them
 * against the organization's keys; the service then applies what every kind shares: the tag must
 * be registered for the scanned node and its counter must move forward (the replay guard).
 */

export type TapProofFailure =
  /** Parameters present but not well-formed. */
  | 'malformed'
  /** The organization has no master key for this kind (no tag was ever personalised). */
  | 'no_key'
  /** No master key version decrypts the tag data: forged, or a tag keyed by someone else. */
  | 'undecryptable'
  /** Decrypted, but the MAC is wrong: tampered with, or a tag keyed by someone else. */
  | 'bad_mac'
  /** A valid proof from a tag that is not registered with this organization. */
  | 'unknown_tag'
  /** A valid proof from a tag registered for another node. */
  | 'other_node'
  /** The counter is not above the last one accepted: a replayed (copied) URL. */
  | 'replayed';

export type TapProofCheck =
  | { ok: true; uid: string; counter: number; keyVersion: number }
  | { ok: false; reason: TapProofFailure; uid?: string; counter?: number };

export interface TapProofKind {
  /** Stored with the tag (tap_proof_tags.kind) and sent in webhook events. */
  readonly kind: string;
  /**
   * False for evidence that anyone can copy and edit (the NTAG21x mirror): a consistent check then
   * leaves the scan nfc_unverified, an inconsistent one still fails. Absent: true.
   */
  readonly proves?: boolean;
  /** Whether this query carries the kind's parameters (cheap: runs on every tag scan). */
  present(query: URLSearchParams): boolean;
  /** The cryptographic (or other) check; no replay check, no storage. */
  check(orgId: string, query: URLSearchParams): TapProofCheck;
}
