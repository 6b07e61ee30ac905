import type { Executor } from '../../db/store.ts';

export type SessionStatus = 'active' | 'stopped' | 'completed';
export type ItemState = 'pending' | 'written' | 'skipped' | 'lost';

export interface SessionRow {
  id: string;
  org_id: string;
  batch_id: string;
  status: SessionStatus;
  lock_tags: number;
  allow_reassign: number;
  mirror_tags: number;
  protect_tags: number;
  started_at: string;
  updated_at: string;
  ended_at: string | null;
}

export interface ItemRow {
  session_id: string;
  node_id: string;
  serial_number: number;
  state: ItemState;
  uid: string | null;
  attempts: number;
  last_error: string | null;
  updated_at: string;
}

export interface WriteLogRow {
  org_id: string;
  node_id: string;
  session_id: string | null;
  uid: string;
  url: string;
  tag_type: string;
  locked: number;
  mirror: number;
  protected: number;
  /** The NTAG21x password master key version of a protected write (null: not protected, or written before versions: 1). */
  password_version: number | null;
  written_at: string;
}

const SESSION_COLUMNS = ['id', 'org_id', 'batch_id', 'status', 'lock_tags', 'allow_reassign', 'mirror_tags', 'protect_tags', 'started_at', 'updated_at', 'ended_at'] as const;
const WRITE_COLUMNS = ['org_id', 'node_id', 'session_id', 'uid', 'url', 'tag_type', 'locked', 'mirror', 'protected', 'password_version', 'written_at'] as const;
const ITEM_COLUMNS = ['session_id', 'node_id', 'serial_number', 'state', 'uid', 'attempts', 'last_error', 'updated_at'] as const;

/** SQL for NFC sessions and the tag write log (the only place NFC SQL lives). */
export class NfcRepo {
  async activeSession(db: Executor): Promise<SessionRow | undefined> {
    const row = await db.selectFrom('nfc_sessions').select(SESSION_COLUMNS).where('status', '=', 'active').limit(1).executeTakeFirst();
    return row as SessionRow | undefined;
  }

  async session(db: Executor, id: string): Promise<SessionRow | undefined> {
    const row = await db.selectFrom('nfc_sessions').select(SESSION_COLUMNS).where('id', '=', id).executeTakeFirst();
    return row as SessionRow | undefined;
  }

  async latestSessionForBatch(db: Executor, batchId: string): Promise<SessionRow | undefined> {
    const row = await db
      .selectFrom('nfc_sessions')
      .select(SESSION_COLUMNS)
      .where('batch_id', '=', batchId)
      .orderBy('started_at', 'desc')
      .orderBy('rowid', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row as SessionRow | undefined;
  }

  async insertSession(db: Executor, row: SessionRow): Promise<void> {
    await db.insertInto('nfc_sessions').values(row).execute();
  }

  async updateSession(db: Executor, row: Pick<SessionRow, 'id' | 'status' | 'updated_at' | 'ended_at'>): Promise<void> {
    await db.updateTable('nfc_sessions').set({ status: row.status, updated_at: row.updated_at, ended_at: row.ended_at }).where('id', '=', row.id).execute();
  }

  async insertItems(db: Executor, rows: ItemRow[]): Promise<void> {
    if (rows.length > 0) await db.insertInto('nfc_session_items').values(rows).execute();
  }

  async items(db: Executor, sessionId: string): Promise<ItemRow[]> {
    const rows = await db.selectFrom('nfc_session_items').select(ITEM_COLUMNS).where('session_id', '=', sessionId).orderBy('serial_number').execute();
    return rows as ItemRow[];
  }

  async item(db: Executor, sessionId: string, nodeId: string): Promise<ItemRow | undefined> {
    const row = await db.selectFrom('nfc_session_items').select(ITEM_COLUMNS).where('session_id', '=', sessionId).where('node_id', '=', nodeId).executeTakeFirst();
    return row as ItemRow | undefined;
  }

  /** The item the session asks for next: first pending by serial, then first skipped. */
  async nextItem(db: Executor, sessionId: string): Promise<ItemRow | undefined> {
    const row = await db
      .selectFrom('nfc_session_items')
      .select(ITEM_COLUMNS)
      .where('session_id', '=', sessionId)
      .where('state', 'in', ['pending', 'skipped'])
      .orderBy((eb) => eb.case().when('state', '=', 'pending').then(0).else(1).end())
      .orderBy('serial_number')
      .limit(1)
      .executeTakeFirst();
    return row as ItemRow | undefined;
  }

  async updateItem(db: Executor, row: ItemRow): Promise<void> {
    await db
      .updateTable('nfc_session_items')
      .set({ state: row.state, uid: row.uid, attempts: row.attempts, last_error: row.last_error, updated_at: row.updated_at })
      .where('session_id', '=', row.session_id)
      .where('node_id', '=', row.node_id)
      .execute();
  }

  /** `mirror` and `protected` default to 0 (a plain tag). */
  async logWrite(
    db: Executor,
    row: Omit<WriteLogRow, 'mirror' | 'protected' | 'password_version'> & Partial<Pick<WriteLogRow, 'mirror' | 'protected' | 'password_version'>>,
  ): Promise<void> {
    await db.insertInto('nfc_writes').values(row).execute();
  }

  /** Each node's writes (uid, tag type, mirror and password), oldest first. */
  async writesForNodes(db: Executor, nodeIds: string[]): Promise<Array<Pick<WriteLogRow, 'node_id' | 'uid' | 'tag_type' | 'mirror' | 'protected'>>> {
    if (nodeIds.length === 0) return [];
    return db.selectFrom('nfc_writes').select(['node_id', 'uid', 'tag_type', 'mirror', 'protected']).where('node_id', 'in', nodeIds).orderBy('seq').execute();
  }

  async writesForNode(db: Executor, nodeId: string): Promise<WriteLogRow[]> {
    return db
      .selectFrom('nfc_writes')
      .select(WRITE_COLUMNS)
      .where('node_id', '=', nodeId)
      .orderBy('seq')
      .execute();
  }

  /** The last time this organization wrote the tag with this UID (its mirror and password state). */
  async lastWriteOfTag(db: Executor, orgId: string, uid: string): Promise<WriteLogRow | undefined> {
    return db.selectFrom('nfc_writes').select(WRITE_COLUMNS).where('org_id', '=', orgId).where('uid', '=', uid).orderBy('seq', 'desc').limit(1).executeTakeFirst();
  }
}
