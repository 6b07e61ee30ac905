import type { Store } from '../../db/store.ts';
import type { Clock } from '../../platform/clock.ts';
import type { Outbox } from '../../platform/outbox.ts';
import type { TapProofCheck, TapProofFailure, TapProofKind } from './registry.ts';
import { TapProofRepo, type TapProofPolicy, type TapProofTagRow } from './repo.ts';

/** The webhook event for a tag URL whose proof failed (docs/webhooks.md). */
export const TAP_UNVERIFIED_EVENT = 'node.tap_unverified';

export interface TapVerdict {
  verified: boolean;
  kind: string;
  reason: TapProofFailure | null;
  /** Serve the "this tag could not be verified" page instead of the content. */
  refuse: boolean;
}

export interface TapProofDeps {
  store: Store;
  clock: Clock;
  outbox: Outbox;
  kinds: TapProofKind[];
  repo?: TapProofRepo;
}

/**
 * Checks the proof a tag URL carries at scan time (scans/handler.ts calls it before recording):
 * the kind's check, then the tag's registration for this node, then the counter claim.
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

  async verify(node: { id: string; org_id: string; slug: string }, query: URLSearchParams): Promise<TapVerdict> {
    const kind = this.kindOf(query);
    if (!kind) return { verified: false, kind: '', reason: 'malformed', refuse: await this.refuses(node.id) };
    const check = kind.check(node.org_id, query);
    const failure = check.ok ? await this.claim(kind.kind, node, check) : check;
    if (failure === null) return { verified: true, kind: kind.kind, reason: null, refuse: false };
    await this.reportFailure(kind.kind, node, failure);
    return { verified: false, kind: kind.kind, reason: failure.reason, refuse: await this.refuses(node.id) };
  }

  /** Null when the counter was accepted; else why not. */
  private async claim(kind: string, node: { id: string; org_id: string }, check: Extract<TapProofCheck, { ok: true }>): Promise<Extract<TapProofCheck, { ok: false }> | null> {
    const db = this.deps.store.db;
    const at = new Date(this.deps.clock.now()).toISOString();
    const key = { org_id: node.org_id, kind, uid: check.uid, node_id: node.id, key_version: check.keyVersion };
    if (await this.repo.claimCounter(db, key, check.counter, at)) return null;
    // Refused: say why (a second read, only on this rare path).
    const tag = await this.repo.tag(db, node.org_id, kind, check.uid);
    const base = { ok: false as const, uid: check.uid, counter: check.counter };
    if (!tag) return { ...base, reason: 'unknown_tag' };
    if (tag.node_id !== node.id) return { ...base, reason: 'other_node' };
    // The counter is not above the last accepted, or the tag was re-keyed since this URL was
    // written (its MAC is from the version it had before): either way a URL seen before.
    return { ...base, reason: 'replayed' };
  }

  private async refuses(nodeId: string): Promise<boolean> {
    return (await this.repo.policy(this.deps.store.db, nodeId)) === 'refuse';
  }

  /** The webhook event, when an endpoint subscribes to it (a flood of forged URLs writes nothing otherwise). */
  private async reportFailure(kind: string, node: { id: string; org_id: string; slug: string }, failure: Extract<TapProofCheck, { ok: false }>): Promise<void> {
    const { store, outbox, clock } = this.deps;
    await store.transaction(async (tx) => {
      if (!(await outbox.subscribed(tx, node.org_id, TAP_UNVERIFIED_EVENT))) return;
      await outbox.record(tx, node.org_id, TAP_UNVERIFIED_EVENT, {
        node: { id: node.id, slug: node.slug },
        kind,
        reason: failure.reason,
        uid: failure.uid ?? null,
        counter: failure.counter ?? null,
        timestamp: new Date(clock.now()).toISOString(),
      });
    });
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
