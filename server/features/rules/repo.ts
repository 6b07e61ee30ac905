import type { Database } from 'better-sqlite3';
import type { FunctionType } from '../../schemas/common.ts';
import type { RuleType } from '../../schemas/rules.ts';

export interface RuleRow {
  id: string;
  node_id: string;
  rule_type: RuleType;
  conditions: Record<string, unknown>;
  function_type: FunctionType;
  payload: Record<string, unknown>;
  priority: number;
  enabled: boolean;
  created_at: string;
  updated_at: string;
}

type Stored = Omit<RuleRow, 'conditions' | 'payload' | 'enabled'> & {
  conditions_json: string;
  payload_json: string;
  enabled: number;
};

const COLUMNS = 'id, node_id, rule_type, conditions_json, function_type, payload_json, priority, enabled, created_at, updated_at';

function fromStored({ conditions_json, payload_json, enabled, ...rest }: Stored): RuleRow {
  return { ...rest, conditions: JSON.parse(conditions_json), payload: JSON.parse(payload_json), enabled: enabled === 1 };
}

function toStored({ conditions, payload, enabled, ...rest }: RuleRow): Stored {
  return { ...rest, conditions_json: JSON.stringify(conditions), payload_json: JSON.stringify(payload), enabled: enabled ? 1 : 0 };
}

export class RulesRepo {
  private readonly listStmt;
  private readonly getStmt;
  private readonly insertStmt;
  private readonly updateStmt;
  private readonly deleteStmt;

  constructor(db: Database) {
    // Evaluation order: priority, then age (rowid breaks ties within one millisecond; ids are random).
    this.listStmt = db.prepare(`SELECT ${COLUMNS} FROM rules WHERE node_id = ? ORDER BY priority, created_at, rowid`);
    this.getStmt = db.prepare(`SELECT ${COLUMNS} FROM rules WHERE node_id = ? AND id = ?`);
    this.insertStmt = db.prepare(
      `INSERT INTO rules (${COLUMNS}) VALUES (@id, @node_id, @rule_type, @conditions_json, @function_type, @payload_json, @priority, @enabled, @created_at, @updated_at)`,
    );
    this.updateStmt = db.prepare(
      `UPDATE rules SET rule_type = @rule_type, conditions_json = @conditions_json, function_type = @function_type,
         payload_json = @payload_json, priority = @priority, enabled = @enabled, updated_at = @updated_at WHERE id = @id`,
    );
    this.deleteStmt = db.prepare('DELETE FROM rules WHERE id = ?');
  }

  listForNode(nodeId: string): RuleRow[] {
    return (this.listStmt.all(nodeId) as Stored[]).map(fromStored);
  }

  get(nodeId: string, id: string): RuleRow | undefined {
    const row = this.getStmt.get(nodeId, id) as Stored | undefined;
    return row && fromStored(row);
  }

  insert(rule: RuleRow): void {
    this.insertStmt.run(toStored(rule));
  }

  update(rule: RuleRow): void {
    this.updateStmt.run(toStored(rule));
  }

  delete(id: string): void {
    this.deleteStmt.run(id);
  }
}
