import type { Executor } from '../../db/store.ts';

export interface PrinterRow {
  id: string;
  org_id: string;
  name: string;
  layout: string | null;
  offset_x: number;
  offset_y: number;
  created_at: string;
  updated_at: string;
}

const COLUMNS = ['id', 'org_id', 'name', 'layout', 'offset_x', 'offset_y', 'created_at', 'updated_at'] as const;

/** Printer profiles (calibration per printer); the only SQL of the printing feature. */
export class PrintersRepo {
  get(db: Executor, orgId: string, id: string): Promise<PrinterRow | undefined> {
    return db.selectFrom('printer_profiles').select(COLUMNS).where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
  }

  async insert(db: Executor, row: PrinterRow): Promise<void> {
    await db.insertInto('printer_profiles').values(row).execute();
  }

  async update(db: Executor, row: PrinterRow): Promise<void> {
    await db
      .updateTable('printer_profiles')
      .set({ name: row.name, layout: row.layout, offset_x: row.offset_x, offset_y: row.offset_y, updated_at: row.updated_at })
      .where('id', '=', row.id)
      .where('org_id', '=', row.org_id)
      .execute();
  }

  async delete(db: Executor, orgId: string, id: string): Promise<boolean> {
    const result = await db.deleteFrom('printer_profiles').where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async list(db: Executor, orgId: string, limit: number, offset: number): Promise<{ rows: PrinterRow[]; total: number }> {
    const rows = await db
      .selectFrom('printer_profiles')
      .select(COLUMNS)
      .where('org_id', '=', orgId)
      .orderBy('created_at', 'desc')
      .orderBy('rowid', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
    const count = await db.selectFrom('printer_profiles').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId).executeTakeFirstOrThrow();
    return { rows, total: Number(count.n) };
  }
}
