import type { Executor } from '../../db/store.ts';
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

type Stored = Omit<RuleRow, 'conditions' | 'payload' | 'enabled' | 'rule_type' | 'function_type'> & {
  rule_type: string;
  function_type: string;
  conditions_json: string;
  payload_json: string;
  enabled: number;
};

const COLUMNS = ['id', 'node_id', 'rule_type', 'conditions_json', 'function_type', 'payload_json', 'priority', 'enabled', 'created_at', 'updated_at'] as const;

function fromStored({ conditions_json, payload_json, enabled, ...rest }: Stored): RuleRow {
  return {
    ...rest,
    rule_type: rest.rule_type as RuleType,
    function_type: rest.function_type as FunctionType,
    conditions: JSON.parse(conditions_json),
    payload: JSON.parse(payload_json),
    enabled: enabled === 1,
  };
}

function toStored({ conditions, payload, enabled, ...rest }: RuleRow): Stored {
  return { ...rest, conditions_json: JSON.stringify(conditions), payload_json: JSON.stringify(payload), enabled: enabled ? 1 : 0 };
}

export class RulesRepo {
  /** Evaluation order: priority, then age (rowid breaks ties within one millisecond; ids are random). */
  listForNode(db: Executor, nodeId: string): Promise<RuleRow[]> {
    return this.listForNodes(db, [nodeId]);
  }

  /** The rules of several nodes, grouped by node, each node's in evaluation order (a page of the export). */
  async listForNodes(db: Executor, nodeIds: readonly string[]): Promise<RuleRow[]> {
    if (nodeIds.length === 0) return [];
    const rows = await db
      .selectFrom('rules')
      .select(COLUMNS)
      .where('node_id', 'in', nodeIds)
      .orderBy('node_id')
      .orderBy('priority')
      .orderBy('created_at')
      .orderBy('rowid')
      .execute();
    return rows.map(fromStored);
  }

  async get(db: Executor, nodeId: string, id: string): Promise<RuleRow | undefined> {
    const row = await db.selectFrom('rules').select(COLUMNS).where('node_id', '=', nodeId).where('id', '=', id).executeTakeFirst();
    return row && fromStored(row);
  }

  async insert(db: Executor, rule: RuleRow): Promise<void> {
    await db.insertInto('rules').values(toStored(rule)).execute();
  }

  async update(db: Executor, rule: RuleRow): Promise<void> {
    const { id: _id, node_id: _node, created_at: _created, ...changes } = toStored(rule);
    await db.updateTable('rules').set(changes).where('id', '=', rule.id).execute();
  }

  async delete(db: Executor, id: string): Promise<void> {
    await db.deleteFrom('rules').where('id', '=', id).execute();
  }
}
