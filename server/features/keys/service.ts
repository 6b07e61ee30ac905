import type { Database } from 'better-sqlite3';
import type { Clock } from '../../platform/clock.ts';
import { ValidationError, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { PLANS, type Plan } from '../../schemas/common.ts';
import type { ApiKeyT } from '../../schemas/apiKeys.ts';
import { generateApiKey, hashApiKey, keyPrefix } from './apiKey.ts';
import type { ApiKeyRow, KeysRepo, OrgRow } from './repo.ts';

/** Per-key budgets (spec "Limits"). Enterprise numbers are set per key. */
export interface Limits {
  standard_per_minute: number;
  batch_per_minute: number;
  burst_per_second: number;
}

export const PLAN_LIMITS: Record<Exclude<Plan, 'enterprise'>, Limits> = {
  developer: { standard_per_minute: 100, batch_per_minute: 10, burst_per_second: 20 },
  pro: { standard_per_minute: 500, batch_per_minute: 50, burst_per_second: 100 },
};
export const ENTERPRISE_DEFAULT_LIMITS: Limits = { standard_per_minute: 5000, batch_per_minute: 500, burst_per_second: 1000 };

export interface AuthenticatedKey {
  keyId: string;
  orgId: string;
  plan: Plan;
  limits: Limits;
}

/** Writes last_used_at at most this often per key, to keep auth off the write path. */
const TOUCH_INTERVAL_MS = 60_000;

export class KeyService {
  private readonly db: Database;
  private readonly repo: KeysRepo;
  private readonly clock: Clock;

  constructor(db: Database, repo: KeysRepo, clock: Clock) {
    this.db = db;
    this.repo = repo;
    this.clock = clock;
  }

  toApi(key: ApiKeyRow): ApiKeyT {
    return {
      id: key.id,
      name: key.name,
      prefix: key.prefix,
      plan: key.plan,
      created_at: key.created_at,
      last_used_at: key.last_used_at,
    };
  }

  createOrg(name: string): OrgRow {
    const org = { id: newId(), name, created_at: this.now() };
    this.repo.insertOrg(org);
    return org;
  }

  hasOrganizations(): boolean {
    return this.repo.countOrgs() > 0;
  }

  /** Creates a key; the plain key is returned once and never stored. */
  createKey(orgId: string, name: string, plan: Plan = 'developer', limits?: Limits): { key: ApiKeyRow; apiKey: string } {
    if (!this.repo.getOrg(orgId)) throw new ValidationError({ org: 'Organization not found' });
    const apiKey = generateApiKey();
    const key: ApiKeyRow = {
      id: newId(),
      org_id: orgId,
      name,
      prefix: keyPrefix(apiKey),
      key_hash: hashApiKey(apiKey),
      plan,
      limits_json: plan === 'enterprise' ? JSON.stringify(limits ?? ENTERPRISE_DEFAULT_LIMITS) : null,
      created_at: this.now(),
      last_used_at: null,
      revoked_at: null,
    };
    this.repo.insertKey(key);
    return { key, apiKey };
  }

  createOrgWithKey(orgName: string, keyName: string): { org: OrgRow; key: ApiKeyRow; apiKey: string } {
    return this.db.transaction(() => {
      const org = this.createOrg(orgName);
      return { org, ...this.createKey(org.id, keyName) };
    })();
  }

  /** Resolves a presented key; undefined when missing, unknown or revoked. */
  authenticate(presented: string | undefined): AuthenticatedKey | undefined {
    if (!presented || !presented.startsWith('wmk_') || presented.length > 100) return undefined;
    const key = this.repo.activeByHash(hashApiKey(presented));
    if (!key) return undefined;
    const now = this.clock.now();
    if (!key.last_used_at || now - Date.parse(key.last_used_at) > TOUCH_INTERVAL_MS) {
      this.repo.touch(key.id, new Date(now).toISOString());
    }
    const limits =
      key.plan === 'enterprise'
        ? (JSON.parse(key.limits_json ?? 'null') as Limits | null) ?? ENTERPRISE_DEFAULT_LIMITS
        : PLAN_LIMITS[key.plan];
    return { keyId: key.id, orgId: key.org_id, plan: key.plan, limits };
  }

  /**
   * Creates a key on behalf of another key: the new key's plan may not exceed the caller's, so a
   * key cannot mint itself a bigger rate budget. (The CLI, run by the operator, may give any plan.)
   */
  createKeyAs(caller: AuthenticatedKey, name: string, plan: Plan = 'developer'): { key: ApiKeyRow; apiKey: string } {
    if (PLANS.indexOf(plan) > PLANS.indexOf(caller.plan)) {
      throw new ValidationError({ plan: `must not exceed the plan of the key making the request (${caller.plan})` });
    }
    return this.createKey(caller.orgId, name, plan, caller.plan === 'enterprise' && plan === 'enterprise' ? caller.limits : undefined);
  }

  organization(orgId: string): OrgRow | undefined {
    return this.repo.getOrg(orgId);
  }

  /**
   * A key for the desktop app's own console: revokes the previous session keys of that name and
   * creates a fresh enterprise-plan key (the local console is not a rate-limited API client).
   * Defaults to the instance's first organization.
   */
  startSessionKey(name: string, orgId?: string): { key: ApiKeyRow; apiKey: string } {
    return this.db.transaction(() => {
      const org = orgId ? this.repo.getOrg(orgId) : this.repo.firstOrg();
      if (!org) throw new ValidationError({ org: 'Organization not found' });
      this.endSessionKeys(name, org.id);
      return this.createKey(org.id, name, 'enterprise');
    })();
  }

  /** Revokes every active key of the given name (the desktop session keys when the app quits). */
  endSessionKeys(name: string, orgId: string): void {
    const at = this.now();
    for (const key of this.repo.list(orgId)) if (key.name === name) this.repo.revoke(key.id, at);
  }

  list(orgId: string): ApiKeyRow[] {
    return this.repo.list(orgId);
  }

  revoke(orgId: string, id: string): void {
    const key = this.repo.get(orgId, id);
    if (!key) throw notFound.apiKey();
    this.repo.revoke(id, this.now());
  }

  private now(): string {
    return new Date(this.clock.now()).toISOString();
  }
}
