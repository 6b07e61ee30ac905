import type { Database } from 'better-sqlite3';
import type { FunctionType, NodeStatus } from '../../schemas/common.ts';

export interface NodeRow {
  id: string;
  org_id: string;
  slug: string;
  label: string;
  function_type: FunctionType;
  payload: Record<string, unknown>;
  status: NodeStatus;
  hardware_id: string | null;
  scan_count: number;
  template_id: string | null;
  batch_id: string | null;
  serial: string | null;
  serial_number: number | null;
  created_at: string;
  updated_at: string;
}

type Stored = Omit<NodeRow, 'payload'> & { payload_json: string };

const COLUMNS =
  'id, org_id, slug, label, function_type, payload_json, status, hardware_id, scan_count, template_id, batch_id, serial, serial_number, created_at, updated_at';

function fromStored(row: Stored): NodeRow {
  const { payload_json, ...rest } = row;
  return { ...rest, payload: JSON.parse(payload_json) as Record<string, unknown> };
}

export interface NodeFilter {
  status?: NodeStatus;
  function_type?: FunctionType;
  batch_id?: string;
  q?: string;
  limit: number;
  offset: number;
}

export class NodesRepo {
  private readonly byId;
  private readonly bySlug;
  private readonly insertStmt;
  private readonly updateStmt;
  private readonly deleteStmt;
  private readonly tombstoneStmt;
  private readonly slugStateStmt;
  private readonly byTemplateStmt;
  private readonly byHardwareStmt;

  private readonly db: Database;

  constructor(db: Database) {
    this.db = db;
    this.byId = db.prepare(`SELECT ${COLUMNS} FROM nodes WHERE id = ?`);
    this.bySlug = db.prepare(`SELECT ${COLUMNS} FROM nodes WHERE org_id = ? AND slug = ?`);
    this.insertStmt = db.prepare(
      `INSERT INTO nodes (${COLUMNS}) VALUES (@id, @org_id, @slug, @label, @function_type, @payload_json, @status, @hardware_id, @scan_count, @template_id, @batch_id, @serial, @serial_number, @created_at, @updated_at)`,
    );
    this.updateStmt = db.prepare(
      `UPDATE nodes SET label = @label, function_type = @function_type, payload_json = @payload_json, status = @status,
         hardware_id = @hardware_id, template_id = @template_id, updated_at = @updated_at WHERE id = @id`,
    );
    this.deleteStmt = db.prepare('DELETE FROM nodes WHERE id = ?');
    this.tombstoneStmt = db.prepare('UPDATE slugs SET deleted_at = ? WHERE slug = ?');
    this.slugStateStmt = db.prepare('SELECT org_id, deleted_at FROM slugs WHERE slug = ?');
    this.byTemplateStmt = db.prepare(`SELECT ${COLUMNS} FROM nodes WHERE template_id = ?`);
    this.byHardwareStmt = db.prepare(`SELECT ${COLUMNS} FROM nodes WHERE org_id = ? AND hardware_id = ?`);
  }

  get(id: string): NodeRow | undefined {
    const row = this.byId.get(id) as Stored | undefined;
    return row && fromStored(row);
  }

  getBySlug(orgId: string, slug: string): NodeRow | undefined {
    const row = this.bySlug.get(orgId, slug) as Stored | undefined;
    return row && fromStored(row);
  }

  getByHardwareId(orgId: string, hardwareId: string): NodeRow | undefined {
    const row = this.byHardwareStmt.get(orgId, hardwareId) as Stored | undefined;
    return row && fromStored(row);
  }

  /** Whether a slug was ever minted, and whether it is a tombstone now. */
  slugState(slug: string): { org_id: string; deleted_at: string | null } | undefined {
    return this.slugStateStmt.get(slug) as { org_id: string; deleted_at: string | null } | undefined;
  }

  insert(node: NodeRow): void {
    this.insertStmt.run({ ...node, payload_json: JSON.stringify(node.payload) });
  }

  update(node: NodeRow): void {
    this.updateStmt.run({ ...node, payload_json: JSON.stringify(node.payload) });
  }

  delete(node: NodeRow, at: string): void {
    // Tombstone first: the sync capture of the delete carries the slug's deleted_at, so every
    // instance records the same time.
    this.tombstoneStmt.run(at, node.slug);
    this.deleteStmt.run(node.id);
  }

  boundToTemplate(templateId: string): NodeRow[] {
    return (this.byTemplateStmt.all(templateId) as Stored[]).map(fromStored);
  }

  list(orgId: string, filter: NodeFilter): { rows: NodeRow[]; total: number } {
    const where = ['org_id = @org_id'];
    const params: Record<string, unknown> = { org_id: orgId, limit: filter.limit, offset: filter.offset };
    if (filter.status) {
      where.push('status = @status');
      params.status = filter.status;
    }
    if (filter.function_type) {
      where.push('function_type = @function_type');
      params.function_type = filter.function_type;
    }
    if (filter.batch_id) {
      where.push('batch_id = @batch_id');
      params.batch_id = filter.batch_id;
    }
    if (filter.q) {
      where.push("(label LIKE @q ESCAPE '\\' OR slug LIKE @q ESCAPE '\\' OR serial LIKE @q ESCAPE '\\')");
      params.q = `%${filter.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    }
    const order = filter.batch_id ? 'serial_number ASC, id ASC' : 'created_at DESC, rowid DESC';
    const clause = where.join(' AND ');
    const rows = this.db
      .prepare(`SELECT ${COLUMNS} FROM nodes WHERE ${clause} ORDER BY ${order} LIMIT @limit OFFSET @offset`)
      .all(params) as Stored[];
    const { total } = this.db.prepare(`SELECT COUNT(*) AS total FROM nodes WHERE ${clause}`).get(params) as {
      total: number;
    };
    return { rows: rows.map(fromStored), total };
  }
}
