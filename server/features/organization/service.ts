import type { Executor, Store } from '../../db/store.ts';
import { type Clock, isoAt } from '../../platform/clock.ts';
import { NotFoundError } from '../../platform/errors.ts';
import type { OrganizationT } from '../../schemas/organization.ts';
import type { OrganizationSettingsRepo } from './repo.ts';
import { scanBaseReach } from './scanBaseReach.ts';

export interface OrganizationServiceDeps {
  store: Store;
  clock: Clock;
  repo: OrganizationSettingsRepo;
  /** The instance default (--scan-base, else the listening origin). */
  instanceScanBase: string;
}

/**
 * An organization's settings: its scan domain. The effective scan base is the organization's
 * own, else the instance default; it is read from the database on each use (it is one row by
 * primary key), so every process of a central instance and every synced change sees it at once.
 */
export class OrganizationService {
  private readonly deps: OrganizationServiceDeps;

  constructor(deps: OrganizationServiceDeps) {
    this.deps = deps;
  }

  /** `{scan_base}` of `orgId`: node URLs are `{scan_base}/v/<slug>`. */
  async scanBase(orgId: string, db: Executor = this.deps.store.db): Promise<string> {
    return (await this.deps.repo.scanBase(db, orgId)) ?? this.deps.instanceScanBase;
  }

  /** A loopback scan base some organization prints with (for the start-up warning), or null. */
  async loopbackScanBase(): Promise<string | null> {
    for (const org of await this.deps.repo.allScanBases(this.deps.store.db)) {
      const scanBase = org.scan_base ?? this.deps.instanceScanBase;
      if (scanBaseReach(scanBase) === 'loopback') return scanBase;
    }
    return null;
  }

  async get(orgId: string, db: Executor = this.deps.store.db): Promise<OrganizationT> {
    const name = await this.deps.repo.orgName(db, orgId);
    if (name === undefined) throw new NotFoundError();
    const row = await this.deps.repo.get(db, orgId);
    const own = row?.scan_base ?? null;
    const scanBase = own ?? this.deps.instanceScanBase;
    return {
      id: orgId,
      name,
      scan_base: scanBase,
      scan_base_source: own === null ? 'instance' : 'organization',
      instance_scan_base: this.deps.instanceScanBase,
      scan_base_reach: scanBaseReach(scanBase),
      scan_base_updated_at: row?.updated_at ?? null,
    };
  }

  /** Sets (or, with null, clears) the organization's scan domain. Tags printed before keep theirs. */
  async update(orgId: string, input: { scan_base: string | null }): Promise<OrganizationT> {
    await this.deps.store.transaction(async (tx) => {
      await this.deps.repo.setScanBase(tx, orgId, input.scan_base, isoAt(this.deps.clock));
    });
    return this.get(orgId);
  }
}
