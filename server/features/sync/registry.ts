import { randomInt } from 'node:crypto';
import type { Clock } from '../../platform/clock.ts';
import { ConflictError } from '../../platform/errors.ts';
import { BLOCK_COUNT, BLOCK_SIZE, decode40, normalizeSlug, unpermute } from '../slugs/index.ts';
import {
  FORKED_ERROR,
  UNKNOWN_INCARNATION_ERROR,
  type LeaseGrantedT,
  type LeaseInput,
  type RegisterSiteInput,
  type SiteRegisteredT,
  SLUG_REJECTIONS,
} from '../../schemas/sync.ts';
import type { Executor, Store } from '../../db/store.ts';
import type { SyncRepo } from './repo.ts';

export type SlugRejection = (typeof SLUG_REJECTIONS)[number];
export type SlugCheck = { ok: true; block: number; incarnation: string } | { ok: false; reason: SlugRejection };

/** The block a slug was minted from (the inverse of the allocator), or null for a malformed slug. */
export function blockOfSlug(input: string): number | null {
  const slug = normalizeSlug(input);
  if (!slug) return null;
  return Math.floor(unpermute(decode40(slug)) / BLOCK_SIZE);
}

type Fence = 'new' | 'advance' | 'retry';

/**
 * The remote side of slug leases: the one allocator of blocks for the sites paired with this
 * instance. A block is recorded once, ever, with the site and incarnation that holds it; it is
 * never leased again, and this instance's own minting skips leased blocks (`isTaken`).
 * Everything here runs in one transaction per call, so a call is applied entirely or not at all,
 * and a retried call (same next_token) gets the same answer. With many processes (PostgreSQL) the
 * calls of one site are serialised by a lock on the site (SyncRepo.lockSite).
 */
export class LeaseRegistry {
  private readonly store: Store;
  private readonly repo: SyncRepo;
  private readonly clock: Clock;
  /** Most blocks one site may be granted in one call. */
  static readonly MAX_GRANT = 8;

  constructor(store: Store, repo: SyncRepo, clock: Clock) {
    this.store = store;
    this.repo = repo;
    this.clock = clock;
  }

  /** Whether a block is leased to (or claimed by) a site: the remote's own allocator skips it. */
  async isTaken(db: Executor, block: number): Promise<boolean> {
    return (await this.repo.leaseOf(db, block)) !== undefined;
  }

  register(orgId: string, input: RegisterSiteInput): Promise<SiteRegisteredT> {
    return this.store.transaction(async (tx) => {
      await this.repo.lockSite(tx, input.site_id);
      const now = this.now();
      const site = await this.repo.getSite(tx, input.site_id);
      if (site && site.org_id !== orgId) throw new ConflictError('This site id is registered with another organization');
      if (!site) await this.repo.insertSite(tx, { site_id: input.site_id, org_id: orgId, name: input.name, created_at: now, last_seen_at: now });
      else await this.repo.touchSite(tx, input.site_id, input.name, now);
      await this.fence(tx, input.site_id, input.incarnation, input.token, input.next_token, true);

      const accepted: number[] = [];
      const rejected: SiteRegisteredT['claims']['rejected'] = [];
      for (const block of [...new Set(input.claims)]) {
        const lease = await this.repo.leaseOf(tx, block);
        if (!lease) {
          if (await this.repo.isOwnBlock(tx, block)) {
            rejected.push({ block, reason: 'held_by_remote' });
            continue;
          }
          await this.repo.insertLease(tx, {
            block,
            org_id: orgId,
            site_id: input.site_id,
            incarnation: input.incarnation,
            kind: 'claim',
            grant_token: input.next_token,
            leased_at: now,
          });
          accepted.push(block);
        } else if (lease.site_id === input.site_id && lease.incarnation === input.incarnation) {
          accepted.push(block);
        } else if (lease.site_id === input.site_id) {
          rejected.push({ block, reason: 'held_by_other_incarnation' });
        } else {
          rejected.push({ block, reason: 'held_by_other_site' });
        }
      }
      return {
        site_id: input.site_id,
        incarnation: input.incarnation,
        org: { id: orgId, name: (await this.repo.orgName(tx, orgId)) ?? '' },
        token: input.next_token,
        claims: { accepted, rejected },
      };
    });
  }

  lease(orgId: string, input: LeaseInput): Promise<LeaseGrantedT> {
    return this.store.transaction(async (tx) => {
      await this.repo.lockSite(tx, input.site_id);
      const site = await this.repo.getSite(tx, input.site_id);
      // No record of it (wrong organization, or this remote was restored from a backup): the site
      // must pair again as a new incarnation, re-recording every block it holds as it does.
      if (!site || site.org_id !== orgId) throw new ConflictError(UNKNOWN_INCARNATION_ERROR);
      await this.repo.touchSite(tx, site.site_id, site.name, this.now());
      const fence = await this.fence(tx, input.site_id, input.incarnation, input.token, input.next_token, false);
      if (fence === 'retry') {
        return { token: input.next_token, blocks: await this.repo.leasesByGrant(tx, input.site_id, input.incarnation, input.next_token) };
      }
      const blocks: number[] = [];
      const count = Math.min(input.want, LeaseRegistry.MAX_GRANT); // 0: a heartbeat that renews the token
      while (blocks.length < count) {
        const block = randomInt(0, BLOCK_COUNT);
        if ((await this.repo.leaseOf(tx, block)) || (await this.repo.isOwnBlock(tx, block))) continue;
        await this.repo.insertLease(tx, {
          block,
          org_id: orgId,
          site_id: input.site_id,
          incarnation: input.incarnation,
          kind: 'lease',
          grant_token: input.next_token,
          leased_at: this.now(),
        });
        blocks.push(block);
      }
      return { token: input.next_token, blocks: blocks.sort((a, b) => a - b) };
    });
  }

  /**
   * Whether `slug` may come from `siteId` of `orgId`: its block must be leased to (or claimed by)
   * that site, under any of its incarnations. The push endpoint uses this for every node a site
   * sends; a slug outside the site's leases is refused.
   */
  async validateSlug(orgId: string, siteId: string, slug: string, db: Executor = this.store.db): Promise<SlugCheck> {
    const block = blockOfSlug(slug);
    if (block === null) return { ok: false, reason: 'malformed' };
    const lease = await this.repo.leaseOf(db, block);
    if (!lease) return { ok: false, reason: 'not_leased' };
    if (lease.site_id !== siteId || lease.org_id !== orgId) return { ok: false, reason: 'leased_to_other_site' };
    return { ok: true, block, incarnation: lease.incarnation };
  }

  async sites(orgId: string) {
    const db = this.store.db;
    const out = [];
    for (const s of await this.repo.listSites(db, orgId)) {
      out.push({ site_id: s.site_id, name: s.name, created_at: s.created_at, last_seen_at: s.last_seen_at, incarnations: await this.repo.listIncarnations(db, s.site_id) });
    }
    return out;
  }

  /**
   * Fencing: the incarnation's stored token must be the one presented (the call advances it to
   * next_token) or already next_token (a retry of a call that was applied). Anything else is a
   * copy of the site's data that has fallen behind another copy: 409 FORKED_ERROR, and that copy
   * starts a new incarnation.
   */
  async fence(tx: Executor, siteId: string, incarnation: string, token: string | null, next: string, mayCreate: boolean): Promise<Fence> {
    const now = this.now();
    const row = await this.repo.getIncarnation(tx, siteId, incarnation);
    if (!row) {
      if (!mayCreate) throw new ConflictError(UNKNOWN_INCARNATION_ERROR);
      await this.repo.insertIncarnation(tx, { site_id: siteId, incarnation, token: next, created_at: now, last_seen_at: now });
      return 'new';
    }
    if (row.token === next) return 'retry';
    if (token !== null && row.token === token) {
      await this.repo.advanceToken(tx, siteId, incarnation, next, now);
      return 'advance';
    }
    throw new ConflictError(FORKED_ERROR);
  }

  private now(): string {
    return new Date(this.clock.now()).toISOString();
  }
}
