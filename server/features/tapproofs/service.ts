import type { Store } from '../../db/store.ts';
import type { Clock } from '../../platform/clock.ts';
import type { TapClaim } from './claim.ts';
import type { TapProofCheck, TapProofKind } from './registry.ts';
import { TapProofRepo, type TapProofPolicy, type TapProofTagRow } from './repo.ts';

export interface TapProofDeps {
  store: Store;
  clock: Clock;
  kinds: TapProofKind[];
  repo?: TapProofRepo;
}

/**
 * Tap proofs at scan time: the kind's check here, before the scan is recorded; the tag's
 * registration and the counter claim in the scan batch's transaction (claimWriter.ts).
 */
export class TapProofService {
  private readonly deps: TapProofDeps;
  private readonly repo: TapProofRepo;

  constructor(deps: TapProofDeps) {
    this.deps = deps;
    this.repo = deps.repo ?? new TapProofRepo();
  }

  /** The kind whose parameters this query carries, if any (cheap: no storage, no crypto). */
  kindOf(query: URLSearchParams): TapProofKind | null {
    for (const kind of this.deps.kinds) if (kind.present(query)) return kind;
    return null;
  }

  /**
   * The proof's check before recording (cryptography only, synchronous, no storage): what the
   * scan writer settles in the batch's transaction (claimWriter.ts). Null when the query carries
   * no proof this instance knows.
   */
  check(node: { id: string; org_id: string; slug: string }, query: URLSearchParams, refusable: boolean): TapClaim | null {
    const kind = this.kindOf(query);
    if (!kind) return null;
    const result = kind.check(node.org_id, query);
    const base = { kind: kind.kind, proves: kind.proves !== false, org_id: node.org_id, node_id: node.id, slug: node.slug, refusable };
    return result.ok
      ? { ...base, uid: result.uid, counter: result.counter, key_version: result.keyVersion, reason: null }
      : { ...base, uid: result.uid ?? null, counter: result.counter ?? null, key_version: null, reason: result.reason };
  }

  /** One kind's check alone (check mode: no replay guard, nothing stored); null for a kind this instance does not know. */
  checkKind(kind: string, orgId: string, query: URLSearchParams): TapProofCheck | null {
    return this.deps.kinds.find((k) => k.kind === kind)?.check(orgId, query) ?? null;
  }

  /** Registers a personalised tag for a node, in the caller's transaction (personalisation). */
  async registerTag(tx: Parameters<TapProofRepo['upsertTag']>[0], row: Omit<TapProofTagRow, 'last_counter'>): Promise<void> {
    await this.repo.upsertTag(tx, { ...row, uid: row.uid.toUpperCase() }, new Date(this.deps.clock.now()).toISOString());
  }

  tagsOfNode(nodeId: string): Promise<TapProofTagRow[]> {
    return this.repo.tagsOfNode(this.deps.store.db, nodeId);
  }

  policy(nodeId: string): Promise<TapProofPolicy> {
    return this.repo.policy(this.deps.store.db, nodeId);
  }

  setPolicy(orgId: string, nodeId: string, policy: TapProofPolicy): Promise<void> {
    return this.repo.setPolicy(this.deps.store.db, orgId, nodeId, policy, new Date(this.deps.clock.now()).toISOString());
  }
}
