import { type ExpressionBuilder, sql } from 'kysely';
import type { Schema } from '../../db/schema.ts';
import type { Dialect, Executor } from '../../db/store.ts';
import type { FunctionType, NodeStatus } from '../../schemas/common.ts';
import type { AfterLimitT } from '../../schemas/nodes.ts';

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
  /** Node limits (docs/api.md "Node limits"); after_limit null = the 410 page. */
  expires_at: string | null;
  max_scans: number | null;
  password_hash: string | null;
  after_limit: AfterLimitT | null;
  created_at: string;
  updated_at: string;
}

const COLUMNS = [
  'id',
  'org_id',
  'slug',
  'label',
  'function_type',
  'payload_json',
  'status',
  'hardware_id',
  'scan_count',
  'template_id',
  'batch_id',
  'serial',
  'serial_number',
  'expires_at',
  'max_scans',
  'password_hash',
  'after_limit_json',
  'created_at',
  'updated_at',
] as const;

type StoredNode = Omit<NodeRow, 'payload' | 'function_type' | 'status' | 'after_limit'> & {
  function_type: string;
  status: string;
  payload_json: string;
  after_limit_json: string | null;
};

function fromStored(row: StoredNode): NodeRow {
  const { payload_json, after_limit_json, ...rest } = row;
  return {
    ...rest,
    function_type: rest.function_type as FunctionType,
    status: rest.status as NodeStatus,
    payload: JSON.parse(payload_json) as Record<string, unknown>,
    max_scans: rest.max_scans === null ? null : Number(rest.max_scans),
    after_limit: after_limit_json === null ? null : (JSON.parse(after_limit_json) as AfterLimitT),
  };
}

function toStored(node: NodeRow): Omit<StoredNode, 'id' | 'org_id' | 'slug' | 'scan_count' | 'batch_id' | 'serial' | 'serial_number' | 'created_at'> {
  return {
    label: node.label,
    function_type: node.function_type,
    payload_json: JSON.stringify(node.payload),
    status: node.status,
    hardware_id: node.hardware_id,
    template_id: node.template_id,
    expires_at: node.expires_at,
    max_scans: node.max_scans,
    password_hash: node.password_hash,
    after_limit_json: node.after_limit === null ? null : JSON.stringify(node.after_limit),
    updated_at: node.updated_at,
  };
}

function insertable(node: NodeRow) {
  return { ...toStored(node), id: node.id, org_id: node.org_id, slug: node.slug, scan_count: node.scan_count, batch_id: node.batch_id, serial: node.serial, serial_number: node.serial_number, created_at: node.created_at };
}

/** Nodes per multi-row INSERT: 19 parameters each, below SQLite's 32,766 and PostgreSQL's 65,535. */
const INSERT_CHUNK = 500;

export interface NodeFilter {
  status?: NodeStatus | undefined;
  function_type?: FunctionType | undefined;
  batch_id?: string | undefined;
  q?: string | undefined;
  limit: number;
  offset: number;
}

/** PostgreSQL: count deltas of one organization (summed by every list) before they are compacted. */
const COUNT_ROWS_BEFORE_COMPACTING = 64;
/** The first key of the advisory lock a compaction takes (the second: the organization's hash). */
const COMPACT_LOCK = 0x6e6f6465; // 'node'

/** The only SQL that writes the nodes table (the nodes feature is its one writer). */
export class NodesRepo {
  private readonly dialect: Dialect;

  constructor(dialect: Dialect) {
    this.dialect = dialect;
  }

  async get(db: Executor, id: string): Promise<NodeRow | undefined> {
    const row = await db.selectFrom('nodes').select(COLUMNS).where('id', '=', id).executeTakeFirst();
    return row && fromStored(row);
  }

  async getBySlug(db: Executor, orgId: string, slug: string): Promise<NodeRow | undefined> {
    const row = await db.selectFrom('nodes').select(COLUMNS).where('org_id', '=', orgId).where('slug', '=', slug).executeTakeFirst();
    return row && fromStored(row);
  }

  async getByHardwareId(db: Executor, orgId: string, hardwareId: string): Promise<NodeRow | undefined> {
    const row = await db.selectFrom('nodes').select(COLUMNS).where('org_id', '=', orgId).where('hardware_id', '=', hardwareId).executeTakeFirst();
    return row && fromStored(row);
  }

  async getBySerial(db: Executor, orgId: string, serial: string): Promise<NodeRow | undefined> {
    const row = await db.selectFrom('nodes').select(COLUMNS).where('org_id', '=', orgId).where('serial', '=', serial).executeTakeFirst();
    return row && fromStored(row);
  }

  /** Up to `limit` nodes of an organization after rowid `after`, in rowid order (keyset paging). */
  async pageAfter(db: Executor, orgId: string, after: number, limit: number): Promise<Array<{ rowid: number; node: NodeRow }>> {
    // SQLite would search the organization's index and sort all its nodes after `after` for each
    // page (an export quadratic in the node count: 10 s of CPU for 190,000); `+org_id` keeps it
    // off that index, so each page walks the rowids on from `after` (linear over the export).
    const org = this.dialect === 'sqlite' ? sql<string>`+${sql.ref('org_id')}` : sql<string>`${sql.ref('org_id')}`;
    const rows = await db
      .selectFrom('nodes')
      .select([...COLUMNS, 'rowid'])
      .where(org, '=', orgId)
      .where('rowid', '>', after)
      .orderBy('rowid')
      .limit(limit)
      .execute();
    return rows.map(({ rowid, ...row }) => ({ rowid: Number(rowid), node: fromStored(row) }));
  }

  /** Whether a slug was ever minted, and whether it is a tombstone now. */
  slugState(db: Executor, slug: string): Promise<{ org_id: string; deleted_at: string | null } | undefined> {
    return db.selectFrom('slugs').select(['org_id', 'deleted_at']).where('slug', '=', slug).executeTakeFirst();
  }

  async insert(db: Executor, node: NodeRow): Promise<void> {
    await db.insertInto('nodes').values(insertable(node)).execute();
  }

  /** Nodes in this order, a few hundred per INSERT (the import creates thousands in one transaction). */
  async insertMany(db: Executor, nodes: readonly NodeRow[]): Promise<void> {
    for (let i = 0; i < nodes.length; i += INSERT_CHUNK) await db.insertInto('nodes').values(nodes.slice(i, i + INSERT_CHUNK).map(insertable)).execute();
  }

  async update(db: Executor, node: NodeRow): Promise<void> {
    await db
      .updateTable('nodes')
      .set(toStored(node))
      .where('id', '=', node.id)
      .execute();
  }

  async delete(db: Executor, node: NodeRow, at: string): Promise<void> {
    // Tombstone first: the sync capture of the delete carries the slug's deleted_at, so every
    // instance records the same time.
    await db.updateTable('slugs').set({ deleted_at: at }).where('slug', '=', node.slug).execute();
    await db.deleteFrom('nodes').where('id', '=', node.id).execute();
  }

  async boundToTemplate(db: Executor, templateId: string): Promise<NodeRow[]> {
    const rows = await db.selectFrom('nodes').select(COLUMNS).where('template_id', '=', templateId).orderBy('rowid').execute();
    return rows.map(fromStored);
  }

  /** Nodes of a batch with a tag bound (written). */
  async countWritten(db: Executor, batchId: string): Promise<number> {
    const row = await db
      .selectFrom('nodes')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('batch_id', '=', batchId)
      .where('hardware_id', 'is not', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async list(db: Executor, orgId: string, filter: NodeFilter): Promise<{ rows: NodeRow[]; total: number }> {
    const where = (eb: ExpressionBuilder<Schema, 'nodes'>) => {
      const terms = [eb('org_id', '=', orgId)];
      if (filter.status) terms.push(eb('status', '=', filter.status));
      if (filter.function_type) terms.push(eb('function_type', '=', filter.function_type));
      if (filter.batch_id) terms.push(eb('batch_id', '=', filter.batch_id));
      if (filter.q) {
        const pattern = `%${filter.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
        // SQLite's LIKE ignores ASCII case; PostgreSQL's ILIKE is the same search.
        const like = this.dialect === 'postgres' ? sql`ILIKE` : sql`LIKE`;
        const match = (column: 'label' | 'slug' | 'serial') => sql<boolean>`${sql.ref(column)} ${like} ${pattern} ESCAPE '\\'`;
        terms.push(eb.or([match('label'), match('slug'), match('serial')]));
      }
      return eb.and(terms);
    };
    let query = db.selectFrom('nodes').select(COLUMNS).where(where);
    query = filter.batch_id ? query.orderBy('serial_number', 'asc').orderBy('id', 'asc') : query.orderBy('created_at', 'desc').orderBy('rowid', 'desc');
    const rows = await query.limit(filter.limit).offset(filter.offset).execute();
    if (filter.batch_id === undefined && filter.q === undefined) {
      return { rows: rows.map(fromStored), total: await this.countByStatusAndType(db, orgId, filter) };
    }
    const count = await db
      .selectFrom('nodes')
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .where(where)
      .executeTakeFirstOrThrow();
    return { rows: rows.map(fromStored), total: Number(count.total) };
  }

  /**
   * The organization's nodes of a status and/or type from the counts the triggers keep (migration
   * 080): a few rows, not a count over its nodes. On PostgreSQL the rows are deltas; once an
   * organization has many, they are replaced by their sums.
   */
  private async countByStatusAndType(db: Executor, orgId: string, filter: Pick<NodeFilter, 'status' | 'function_type'>): Promise<number> {
    let query = db
      .selectFrom('node_counts')
      .select((eb) => [eb.fn.coalesce(eb.fn.sum<number>('nodes'), eb.lit(0)).as('total'), eb.fn.countAll<number>().as('rows')])
      .where('org_id', '=', orgId);
    if (filter.status) query = query.where('status', '=', filter.status);
    if (filter.function_type) query = query.where('function_type', '=', filter.function_type);
    const row = await query.executeTakeFirstOrThrow();
    if (this.dialect === 'postgres' && Number(row.rows) > COUNT_ROWS_BEFORE_COMPACTING) await this.compactCounts(db, orgId);
    return Number(row.total);
  }

  /**
   * PostgreSQL: replaces an organization's count deltas by one row per key, in one statement (the
   * deleted rows' sums are inserted back; rows of transactions still running are not seen and
   * stay). A transaction-level advisory lock keeps two compactions of one organization apart.
   */
  private async compactCounts(db: Executor, orgId: string): Promise<void> {
    await sql`
      WITH turn AS (SELECT pg_try_advisory_xact_lock(${COMPACT_LOCK}, hashtext(${orgId})) AS mine),
      gone AS (DELETE FROM node_counts WHERE org_id = ${orgId} AND (SELECT mine FROM turn) RETURNING status, function_type, nodes)
      INSERT INTO node_counts (org_id, status, function_type, nodes)
        SELECT ${orgId}, status, function_type, sum(nodes) FROM gone GROUP BY status, function_type HAVING sum(nodes) <> 0`.execute(db);
  }
}
