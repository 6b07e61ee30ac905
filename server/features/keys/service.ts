import type { Executor, Store } from '../../db/store.ts';
import type { Clock } from '../../platform/clock.ts';
import { ValidationError, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { PLANS, type Plan } from '../../schemas/common.ts';
import type { ApiKeyT } from '../../schemas/apiKeys.ts';
import { generateApiKey, hashApiKey, keyPrefix } from './apiKey.ts';
import type { ApiKeyRow, KeysRepo, OrgRow } from './repo.ts';
import type { AuthenticatedKey, KeyAuthenticator, Limits } from '../../http/auth.ts';

export type { AuthenticatedKey, Limits } from '../../http/auth.ts';

/** Per-key budgets (spec "Limits"). Enterprise numbers are set per key. */

export const PLAN_LIMITS: Record<Exclude<Plan, 'enterprise'>, Limits> = {
  developer: { standard_per_minute: 100, batch_per_minute: 10, burst_per_second: 20 },
  pro: { standard_per_minute: 500, batch_per_minute: 50, burst_per_second: 100 },
};
export const ENTERPRISE_DEFAULT_LIMITS: Limits = { standard_per_minute: 5000, batch_per_minute: 500, burst_per_second: 1000 };


/** What a request made with a key that is not an instance-admin key gets where one is needed. */
export const ADMIN_KEY_NEEDED =
  'needs an instance-admin key: the key created with the first organization, or one made with `waymark keys create --admin`';

/** Writes last_used_at at most this often per key, to keep auth off the write path. */
const TOUCH_INTERVAL_MS = 60_000;

export class KeyService implements KeyAuthenticator {
  private readonly store: Store;
  private readonly repo: KeysRepo;
  private readonly clock: Clock;

  constructor(store: Store, repo: KeysRepo, clock: Clock) {
    this.store = store;
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

  async createOrg(name: string, db: Executor = this.store.db): Promise<OrgRow> {
    const org = { id: newId(), name, created_at: this.now() };
    await this.repo.insertOrg(db, org);
    return org;
  }

  listOrgs(): Promise<Array<OrgRow & { active_keys: number }>> {
    return this.repo.listOrgsWithKeyCounts(this.store.db);
  }

  /**
   * The organizations an operator may mean by `ref`: the one with that id, else those with
   * exactly that name (none, one, or several that share it).
   */
  async findOrgs(ref: string): Promise<OrgRow[]> {
    const byId = await this.repo.getOrg(this.store.db, ref);
    return byId ? [byId] : this.repo.orgsNamed(this.store.db, ref);
  }

  /**
   * Creates a key; the plain key is returned once and never stored. `admin` makes it an
   * instance-admin key: only the operator (CLI, first start, the desktop app) asks for one.
   */
  async createKey(
    orgId: string,
    name: string,
    plan: Plan = 'developer',
    limits?: Limits,
    db: Executor = this.store.db,
    options: { admin?: boolean } = {},
  ): Promise<{ key: ApiKeyRow; apiKey: string }> {
    if (!(await this.repo.getOrg(db, orgId))) throw new ValidationError({ org: 'Organization not found' });
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
      admin: options.admin ? 1 : 0,
    };
    await this.repo.insertKey(db, key);
    return { key, apiKey };
  }

  /** A new organization and its first key, which is an instance-admin key when this is the instance's first organization. */
  /**
   * The first start's organization and key, unless the instance has an organization already
   * (then undefined): safe when several processes start together on one empty database.
   */
  createFirstOrgWithKey(orgName: string, keyName: string): Promise<{ org: OrgRow; key: ApiKeyRow; apiKey: string } | undefined> {
    return this.store.transaction(async (tx) => {
      await this.repo.lockOrganizations(tx, this.store.dialect);
      if ((await this.repo.countOrgs(tx)) > 0) return undefined;
      const org = await this.createOrg(orgName, tx);
      return { org, ...(await this.createKey(org.id, keyName, 'developer', undefined, tx, { admin: true })) };
    });
  }

  createOrgWithKey(orgName: string, keyName: string): Promise<{ org: OrgRow; key: ApiKeyRow; apiKey: string }> {
    return this.store.transaction(async (tx) => {
      await this.repo.lockOrganizations(tx, this.store.dialect);
      const first = (await this.repo.countOrgs(tx)) === 0;
      const org = await this.createOrg(orgName, tx);
      return { org, ...(await this.createKey(org.id, keyName, 'developer', undefined, tx, { admin: first })) };
    });
  }

  /** Resolves a presented key; undefined when missing, unknown or revoked. */
  async authenticate(presented: string | undefined): Promise<AuthenticatedKey | undefined> {
    if (!presented || !presented.startsWith('wmk_') || presented.length > 100) return undefined;
    const key = await this.repo.activeByHash(this.store.db, hashApiKey(presented));
    if (!key) return undefined;
    const now = this.clock.now();
    if (!key.last_used_at || now - Date.parse(key.last_used_at) > TOUCH_INTERVAL_MS) {
      await this.repo.touch(this.store.db, key.id, new Date(now).toISOString());
    }
    const limits =
      key.plan === 'enterprise'
        ? (JSON.parse(key.limits_json ?? 'null') as Limits | null) ?? ENTERPRISE_DEFAULT_LIMITS
        : PLAN_LIMITS[key.plan];
    return { keyId: key.id, orgId: key.org_id, plan: key.plan, limits, admin: Number(key.admin) === 1 };
  }

  /**
   * Creates a key on behalf of another key: the new key's plan may not exceed the caller's, so a
   * key cannot mint itself a bigger rate budget. (The CLI, run by the operator, may give any plan.)
   */
  createKeyAs(caller: AuthenticatedKey, name: string, plan: Plan = 'developer'): Promise<{ key: ApiKeyRow; apiKey: string }> {
    if (PLANS.indexOf(plan) > PLANS.indexOf(caller.plan)) {
      throw new ValidationError({ plan: `must not exceed the plan of the key making the request (${caller.plan})` });
    }
    return this.createKey(caller.orgId, name, plan, caller.plan === 'enterprise' && plan === 'enterprise' ? caller.limits : undefined);
  }

  organization(orgId: string): Promise<OrgRow | undefined> {
    return this.repo.getOrg(this.store.db, orgId);
  }

  /**
   * A key for the desktop app's own console: revokes the previous session keys of that name and
   * creates a fresh enterprise-plan key (the local console is not a rate-limited API client).
   * Defaults to the instance's first organization, whose session key is an instance-admin key
   * (the person at the desktop app is the operator).
   */
  startSessionKey(name: string, orgId?: string): Promise<{ key: ApiKeyRow; apiKey: string }> {
    return this.store.transaction(async (tx) => {
      const first = await this.repo.firstOrg(tx);
      const org = orgId ? await this.repo.getOrg(tx, orgId) : first;
      if (!org) throw new ValidationError({ org: 'Organization not found' });
      await this.endSessionKeys(name, org.id, tx);
      return this.createKey(org.id, name, 'enterprise', undefined, tx, { admin: org.id === first?.id });
    });
  }

  /** Revokes every active key of the given name (the desktop session keys when the app quits). */
  async endSessionKeys(name: string, orgId: string, db: Executor = this.store.db): Promise<void> {
    const at = this.now();
    for (const key of await this.repo.list(db, orgId)) if (key.name === name) await this.repo.revoke(db, key.id, at);
  }

  list(orgId: string): Promise<ApiKeyRow[]> {
    return this.repo.list(this.store.db, orgId);
  }

  async revoke(orgId: string, id: string): Promise<void> {
    await this.store.transaction(async (tx) => {
      const key = await this.repo.get(tx, orgId, id);
      if (!key) throw notFound.apiKey();
      await this.repo.revoke(tx, id, this.now());
    });
  }

  private now(): string {
    return new Date(this.clock.now()).toISOString();
  }
}
