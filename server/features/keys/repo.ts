import { sql } from 'kysely';
import type { Dialect, Executor } from '../../db/store.ts';
import type { Plan } from '../../schemas/common.ts';

export interface OrgRow {
  id: string;
  name: string;
  created_at: string;
}

export interface ApiKeyRow {
  id: string;
  org_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  plan: Plan;
  limits_json: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  /** 1: an instance-admin key (migration 002). */
  admin: 0 | 1;
}

const KEY_COLUMNS = ['id', 'org_id', 'name', 'prefix', 'key_hash', 'plan', 'limits_json', 'created_at', 'last_used_at', 'revoked_at', 'admin'] as const;
const ORG_COLUMNS = ['id', 'name', 'created_at'] as const;

/** Organizations and their API keys (only hashes of keys are stored). */
export class KeysRepo {
  /**
   * Serializes creating organizations for the rest of the transaction, across processes
   * (PostgreSQL; SQLite has one writer already): of processes starting together on an empty
   * database, exactly one creates the first organization and its admin key.
   */
  async lockOrganizations(db: Executor, dialect: Dialect): Promise<void> {
    if (dialect === 'postgres') await sql`SELECT pg_advisory_xact_lock(hashtextextended('waymark:organizations', 0))`.execute(db);
  }

  async insertOrg(db: Executor, org: OrgRow): Promise<void> {
    await db.insertInto('organizations').values(org).execute();
  }

  getOrg(db: Executor, id: string): Promise<OrgRow | undefined> {
    return db.selectFrom('organizations').select(ORG_COLUMNS).where('id', '=', id).executeTakeFirst();
  }

  /** The oldest organization (the default one a fresh instance creates). */
  firstOrg(db: Executor): Promise<OrgRow | undefined> {
    return db.selectFrom('organizations').select(ORG_COLUMNS).orderBy('created_at', 'asc').orderBy('rowid', 'asc').limit(1).executeTakeFirst();
  }

  /** Every organization, oldest first, with its number of active (unrevoked) keys. */
  async listOrgsWithKeyCounts(db: Executor): Promise<Array<OrgRow & { active_keys: number }>> {
    const rows = await db
      .selectFrom('organizations')
      .select(ORG_COLUMNS)
      .select((eb) =>
        eb
          .selectFrom('api_keys')
          .select((k) => k.fn.countAll<number>().as('n'))
          .whereRef('api_keys.org_id', '=', 'organizations.id')
          .where('api_keys.revoked_at', 'is', null)
          .as('active_keys'),
      )
      .orderBy('created_at', 'asc')
      .orderBy('rowid', 'asc')
      .execute();
    return rows.map((r) => ({ id: r.id, name: r.name, created_at: r.created_at, active_keys: Number(r.active_keys ?? 0) }));
  }

  orgsNamed(db: Executor, name: string): Promise<OrgRow[]> {
    return db.selectFrom('organizations').select(ORG_COLUMNS).where('name', '=', name).orderBy('created_at', 'asc').orderBy('rowid', 'asc').execute();
  }

  async countOrgs(db: Executor): Promise<number> {
    const row = await db.selectFrom('organizations').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async insertKey(db: Executor, key: ApiKeyRow): Promise<void> {
    await db.insertInto('api_keys').values(key).execute();
  }

  async activeByHash(db: Executor, hash: string): Promise<ApiKeyRow | undefined> {
    const row = await db.selectFrom('api_keys').select(KEY_COLUMNS).where('key_hash', '=', hash).where('revoked_at', 'is', null).executeTakeFirst();
    return row as ApiKeyRow | undefined;
  }

  async get(db: Executor, orgId: string, id: string): Promise<ApiKeyRow | undefined> {
    const row = await db
      .selectFrom('api_keys')
      .select(KEY_COLUMNS)
      .where('org_id', '=', orgId)
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return row as ApiKeyRow | undefined;
  }

  async list(db: Executor, orgId: string): Promise<ApiKeyRow[]> {
    const rows = await db
      .selectFrom('api_keys')
      .select(KEY_COLUMNS)
      .where('org_id', '=', orgId)
      .where('revoked_at', 'is', null)
      .orderBy('created_at', 'desc')
      .orderBy('rowid', 'desc')
      .execute();
    return rows as ApiKeyRow[];
  }

  async revoke(db: Executor, id: string, at: string): Promise<void> {
    await db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', id).execute();
  }

  async touch(db: Executor, id: string, at: string): Promise<void> {
    await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  }
}
