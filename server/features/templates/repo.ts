import type { Database } from 'better-sqlite3';
import type { FunctionType } from '../../schemas/common.ts';

export interface TemplateRow {
  id: string;
  org_id: string;
  name: string;
  function_type: FunctionType;
  payload: Record<string, unknown>;
  locked_fields: string[];
  created_at: string;
  updated_at: string;
}

type Stored = Omit<TemplateRow, 'payload' | 'locked_fields'> & { payload_json: string; locked_fields_json: string };

const COLUMNS = 'id, org_id, name, function_type, payload_json, locked_fields_json, created_at, updated_at';

function fromStored({ payload_json, locked_fields_json, ...rest }: Stored): TemplateRow {
  return { ...rest, payload: JSON.parse(payload_json), locked_fields: JSON.parse(locked_fields_json) };
}

function toStored(t: TemplateRow): Stored {
  const { payload, locked_fields, ...rest } = t;
  return { ...rest, payload_json: JSON.stringify(payload), locked_fields_json: JSON.stringify(locked_fields) };
}

export class TemplatesRepo {
  private readonly getStmt;
  private readonly insertStmt;
  private readonly updateStmt;
  private readonly deleteStmt;
  private readonly listStmt;
  private readonly countStmt;

  constructor(db: Database) {
    this.getStmt = db.prepare(`SELECT ${COLUMNS} FROM templates WHERE org_id = ? AND id = ?`);
    this.insertStmt = db.prepare(
      `INSERT INTO templates (${COLUMNS}) VALUES (@id, @org_id, @name, @function_type, @payload_json, @locked_fields_json, @created_at, @updated_at)`,
    );
    this.updateStmt = db.prepare(
      'UPDATE templates SET name = @name, payload_json = @payload_json, locked_fields_json = @locked_fields_json, updated_at = @updated_at WHERE id = @id',
    );
    this.deleteStmt = db.prepare('DELETE FROM templates WHERE id = ?');
    this.listStmt = db.prepare(
      `SELECT ${COLUMNS} FROM templates WHERE org_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`,
    );
    this.countStmt = db.prepare('SELECT COUNT(*) FROM templates WHERE org_id = ?').pluck();
  }

  get(orgId: string, id: string): TemplateRow | undefined {
    const row = this.getStmt.get(orgId, id) as Stored | undefined;
    return row && fromStored(row);
  }

  insert(t: TemplateRow): void {
    this.insertStmt.run(toStored(t));
  }

  update(t: TemplateRow): void {
    this.updateStmt.run(toStored(t));
  }

  delete(id: string): void {
    this.deleteStmt.run(id);
  }

  list(orgId: string, limit: number, offset: number): { rows: TemplateRow[]; total: number } {
    return {
      rows: (this.listStmt.all(orgId, limit, offset) as Stored[]).map(fromStored),
      total: this.countStmt.get(orgId) as number,
    };
  }
}
