import type { Database } from 'better-sqlite3';
import type { BatchStatus, FunctionType } from '../../schemas/common.ts';

export interface BatchRow {
  id: string;
  org_id: string;
  label: string;
  prefix: string;
  quantity: number;
  serial_start: number;
  function_type: FunctionType;
  base_payload: Record<string, unknown> | null;
  template_id: string | null;
  status: BatchStatus;
  failure_reason: string | null;
  nodes_generated: number;
  created_at: string;
  updated_at: string;
}

type Stored = Omit<BatchRow, 'base_payload'> & { base_payload_json: string | null };

const COLUMNS =
  'id, org_id, label, prefix, quantity, serial_start, function_type, base_payload_json, template_id, status, failure_reason, nodes_generated, created_at, updated_at';

function fromStored({ base_payload_json, ...rest }: Stored): BatchRow {
  return { ...rest, base_payload: base_payload_json === null ? null : JSON.parse(base_payload_json) };
}

export class BatchesRepo {
  private readonly getStmt;
  private readonly getAnyStmt;
  private readonly insertStmt;
  private readonly updateStmt;
  private readonly nextSerialStmt;
  private readonly bumpSerialStmt;
  private readonly generatingStmt;
  private readonly writtenStmt;

  private readonly db: Database;

  constructor(db: Database) {
    this.db = db;
    this.getStmt = db.prepare(`SELECT ${COLUMNS} FROM batches WHERE org_id = ? AND id = ?`);
    this.getAnyStmt = db.prepare(`SELECT ${COLUMNS} FROM batches WHERE id = ?`);
    this.insertStmt = db.prepare(
      `INSERT INTO batches (${COLUMNS}) VALUES (@id, @org_id, @label, @prefix, @quantity, @serial_start, @function_type, @base_payload_json, @template_id, @status, @failure_reason, @nodes_generated, @created_at, @updated_at)`,
    );
    this.updateStmt = db.prepare(
      `UPDATE batches SET label = @label, status = @status, failure_reason = @failure_reason,
         nodes_generated = @nodes_generated, updated_at = @updated_at WHERE id = @id`,
    );
    this.nextSerialStmt = db.prepare('SELECT next_number FROM serial_counters WHERE org_id = ? AND prefix = ?').pluck();
    this.bumpSerialStmt = db.prepare(
      `INSERT INTO serial_counters (org_id, prefix, next_number) VALUES (@org_id, @prefix, @next)
       ON CONFLICT (org_id, prefix) DO UPDATE SET next_number = @next`,
    );
    this.generatingStmt = db.prepare(`SELECT id FROM batches WHERE status = 'generating' ORDER BY created_at`).pluck();
    this.writtenStmt = db.prepare('SELECT COUNT(*) FROM nodes WHERE batch_id = ? AND hardware_id IS NOT NULL').pluck();
  }

  get(orgId: string, id: string): BatchRow | undefined {
    const row = this.getStmt.get(orgId, id) as Stored | undefined;
    return row && fromStored(row);
  }

  getById(id: string): BatchRow | undefined {
    const row = this.getAnyStmt.get(id) as Stored | undefined;
    return row && fromStored(row);
  }

  insert(batch: BatchRow): void {
    const { base_payload, ...rest } = batch;
    this.insertStmt.run({ ...rest, base_payload_json: base_payload === null ? null : JSON.stringify(base_payload) });
  }

  update(batch: BatchRow): void {
    this.updateStmt.run(batch);
  }

  /** Reserves `quantity` serial numbers for a prefix; returns the first. Call in a transaction. */
  reserveSerials(orgId: string, prefix: string, quantity: number): number {
    const start = (this.nextSerialStmt.get(orgId, prefix) as number | undefined) ?? 1;
    this.bumpSerialStmt.run({ org_id: orgId, prefix, next: start + quantity });
    return start;
  }

  generatingIds(): string[] {
    return this.generatingStmt.all() as string[];
  }

  nodesWritten(id: string): number {
    return this.writtenStmt.get(id) as number;
  }

  list(orgId: string, status: BatchStatus | undefined, limit: number, offset: number): { rows: BatchRow[]; total: number } {
    const where = status ? 'org_id = ? AND status = ?' : 'org_id = ?';
    const args = status ? [orgId, status] : [orgId];
    const rows = this.db
      .prepare(`SELECT ${COLUMNS} FROM batches WHERE ${where} ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`)
      .all(...args, limit, offset) as Stored[];
    const total = this.db.prepare(`SELECT COUNT(*) FROM batches WHERE ${where}`).pluck().get(...args) as number;
    return { rows: rows.map(fromStored), total };
  }
}
