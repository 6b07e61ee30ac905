import type { Executor } from '../../db/store.ts';
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

const COLUMNS = ['id', 'org_id', 'name', 'function_type', 'payload_json', 'locked_fields_json', 'created_at', 'updated_at'] as const;

type Stored = Omit<TemplateRow, 'payload' | 'locked_fields' | 'function_type'> & { function_type: string; payload_json: string; locked_fields_json: string };

function fromStored({ payload_json, locked_fields_json, ...rest }: Stored): TemplateRow {
  return { ...rest, function_type: rest.function_type as FunctionType, payload: JSON.parse(payload_json), locked_fields: JSON.parse(locked_fields_json) };
}

function toStored(t: TemplateRow): Stored {
  const { payload, locked_fields, ...rest } = t;
  return { ...rest, payload_json: JSON.stringify(payload), locked_fields_json: JSON.stringify(locked_fields) };
}

export class TemplatesRepo {
  async get(db: Executor, orgId: string, id: string): Promise<TemplateRow | undefined> {
    const row = await db.selectFrom('templates').select(COLUMNS).where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
    return row && fromStored(row);
  }

  async insert(db: Executor, t: TemplateRow): Promise<void> {
    await db.insertInto('templates').values(toStored(t)).execute();
  }

  async update(db: Executor, t: TemplateRow): Promise<void> {
    const { name, payload_json, locked_fields_json, updated_at } = toStored(t);
    await db.updateTable('templates').set({ name, payload_json, locked_fields_json, updated_at }).where('id', '=', t.id).execute();
  }

  async delete(db: Executor, id: string): Promise<void> {
    await db.deleteFrom('templates').where('id', '=', id).execute();
  }

  async list(db: Executor, orgId: string, limit: number, offset: number): Promise<{ rows: TemplateRow[]; total: number }> {
    const rows = await db
      .selectFrom('templates')
      .select(COLUMNS)
      .where('org_id', '=', orgId)
      .orderBy('created_at', 'desc')
      .orderBy('rowid', 'desc')
      .limit(limit)
      .offset(offset)
      .execute();
    const count = await db.selectFrom('templates').select((eb) => eb.fn.countAll<number>().as('n')).where('org_id', '=', orgId).executeTakeFirstOrThrow();
    return { rows: rows.map(fromStored), total: Number(count.n) };
  }
}
