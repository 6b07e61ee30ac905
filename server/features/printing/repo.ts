import type { Database } from 'better-sqlite3';

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

const COLUMNS = 'id, org_id, name, layout, offset_x, offset_y, created_at, updated_at';

/** Printer profiles (calibration per printer); the only SQL of the printing feature. */
export class PrintersRepo {
  private readonly getStmt;
  private readonly insertStmt;
  private readonly updateStmt;
  private readonly deleteStmt;
  private readonly listStmt;
  private readonly countStmt;

  constructor(db: Database) {
    this.getStmt = db.prepare(`SELECT ${COLUMNS} FROM printer_profiles WHERE org_id = ? AND id = ?`);
    this.insertStmt = db.prepare(
      `INSERT INTO printer_profiles (${COLUMNS}) VALUES (@id, @org_id, @name, @layout, @offset_x, @offset_y, @created_at, @updated_at)`,
    );
    this.updateStmt = db.prepare(
      'UPDATE printer_profiles SET name = @name, layout = @layout, offset_x = @offset_x, offset_y = @offset_y, updated_at = @updated_at WHERE id = @id AND org_id = @org_id',
    );
    this.deleteStmt = db.prepare('DELETE FROM printer_profiles WHERE org_id = ? AND id = ?');
    this.listStmt = db.prepare(`SELECT ${COLUMNS} FROM printer_profiles WHERE org_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`);
    this.countStmt = db.prepare('SELECT COUNT(*) FROM printer_profiles WHERE org_id = ?').pluck();
  }

  get(orgId: string, id: string): PrinterRow | undefined {
    return this.getStmt.get(orgId, id) as PrinterRow | undefined;
  }

  insert(row: PrinterRow): void {
    this.insertStmt.run(row);
  }

  update(row: PrinterRow): void {
    this.updateStmt.run(row);
  }

  delete(orgId: string, id: string): boolean {
    return this.deleteStmt.run(orgId, id).changes > 0;
  }

  list(orgId: string, limit: number, offset: number): { rows: PrinterRow[]; total: number } {
    return { rows: this.listStmt.all(orgId, limit, offset) as PrinterRow[], total: this.countStmt.get(orgId) as number };
  }
}
