import type { Executor } from '../../db/store.ts';

export interface OrganizationSettingsRow {
  id: string;
  org_id: string;
  scan_base: string | null;
  updated_at: string;
}

/** An organization's settings (migration 066): one row per organization, its id the organization's. */
export class OrganizationSettingsRepo {
  /** The organization's name (the keys feature creates organizations; this only reads them). */
  async orgName(db: Executor, orgId: string): Promise<string | undefined> {
    return (await db.selectFrom('organizations').select('name').where('id', '=', orgId).executeTakeFirst())?.name;
  }

  get(db: Executor, orgId: string): Promise<OrganizationSettingsRow | undefined> {
    return db.selectFrom('organization_settings').select(['id', 'org_id', 'scan_base', 'updated_at']).where('id', '=', orgId).executeTakeFirst();
  }

  /** Every organization's own scan base (null: none set). */
  async allScanBases(db: Executor): Promise<Array<{ id: string; scan_base: string | null }>> {
    const rows = await db
      .selectFrom('organizations')
      .leftJoin('organization_settings', 'organization_settings.id', 'organizations.id')
      .select(['organizations.id as id', 'organization_settings.scan_base as scan_base'])
      .execute();
    return rows.map((r) => ({ id: r.id, scan_base: r.scan_base ?? null }));
  }

  /** The organization's own scan base (null: none set, the instance default applies). */
  async scanBase(db: Executor, orgId: string): Promise<string | null> {
    const row = await db.selectFrom('organization_settings').select('scan_base').where('id', '=', orgId).executeTakeFirst();
    return row?.scan_base ?? null;
  }

  async setScanBase(db: Executor, orgId: string, scanBase: string | null, at: string): Promise<void> {
    await db
      .insertInto('organization_settings')
      .values({ id: orgId, org_id: orgId, scan_base: scanBase, updated_at: at })
      .onConflict((oc) => oc.column('id').doUpdateSet({ scan_base: scanBase, updated_at: at }))
      .execute();
  }
}
