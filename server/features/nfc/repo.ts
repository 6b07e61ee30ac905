import type { Database } from 'better-sqlite3';

export type SessionStatus = 'active' | 'stopped' | 'completed';
export type ItemState = 'pending' | 'written' | 'skipped' | 'lost';

export interface SessionRow {
  id: string;
  org_id: string;
  batch_id: string;
  status: SessionStatus;
  lock_tags: number;
  allow_reassign: number;
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
  written_at: string;
}

/** SQL for NFC sessions and the tag write log (the only place NFC SQL lives). */
export class NfcRepo {
  private readonly db: Database;
  private readonly s;

  constructor(db: Database) {
    this.db = db;
    this.s = {
      active: db.prepare(`SELECT * FROM nfc_sessions WHERE status = 'active' LIMIT 1`),
      byId: db.prepare('SELECT * FROM nfc_sessions WHERE id = ?'),
      latestForBatch: db.prepare('SELECT * FROM nfc_sessions WHERE batch_id = ? ORDER BY started_at DESC, rowid DESC LIMIT 1'),
      insertSession: db.prepare(
        `INSERT INTO nfc_sessions (id, org_id, batch_id, status, lock_tags, allow_reassign, started_at, updated_at, ended_at)
         VALUES (@id, @org_id, @batch_id, @status, @lock_tags, @allow_reassign, @started_at, @updated_at, @ended_at)`,
      ),
      updateSession: db.prepare('UPDATE nfc_sessions SET status = @status, updated_at = @updated_at, ended_at = @ended_at WHERE id = @id'),
      insertItem: db.prepare(
        `INSERT INTO nfc_session_items (session_id, node_id, serial_number, state, uid, attempts, last_error, updated_at)
         VALUES (@session_id, @node_id, @serial_number, @state, @uid, @attempts, @last_error, @updated_at)`,
      ),
      items: db.prepare('SELECT * FROM nfc_session_items WHERE session_id = ? ORDER BY serial_number'),
      item: db.prepare('SELECT * FROM nfc_session_items WHERE session_id = ? AND node_id = ?'),
      next: db.prepare(
        `SELECT * FROM nfc_session_items WHERE session_id = ? AND state IN ('pending', 'skipped')
         ORDER BY CASE state WHEN 'pending' THEN 0 ELSE 1 END, serial_number LIMIT 1`,
      ),
      setItem: db.prepare(
        `UPDATE nfc_session_items SET state = @state, uid = @uid, attempts = @attempts, last_error = @last_error, updated_at = @updated_at
         WHERE session_id = @session_id AND node_id = @node_id`,
      ),
      insertWrite: db.prepare(
        `INSERT INTO nfc_writes (org_id, node_id, session_id, uid, url, tag_type, locked, written_at)
         VALUES (@org_id, @node_id, @session_id, @uid, @url, @tag_type, @locked, @written_at)`,
      ),
      writesForNode: db.prepare('SELECT org_id, node_id, session_id, uid, url, tag_type, locked, written_at FROM nfc_writes WHERE node_id = ? ORDER BY seq'),
    };
  }

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  activeSession(): SessionRow | undefined {
    return this.s.active.get() as SessionRow | undefined;
  }

  session(id: string): SessionRow | undefined {
    return this.s.byId.get(id) as SessionRow | undefined;
  }

  latestSessionForBatch(batchId: string): SessionRow | undefined {
    return this.s.latestForBatch.get(batchId) as SessionRow | undefined;
  }

  insertSession(row: SessionRow): void {
    this.s.insertSession.run(row);
  }

  updateSession(row: Pick<SessionRow, 'id' | 'status' | 'updated_at' | 'ended_at'>): void {
    this.s.updateSession.run(row);
  }

  insertItem(row: ItemRow): void {
    this.s.insertItem.run(row);
  }

  items(sessionId: string): ItemRow[] {
    return this.s.items.all(sessionId) as ItemRow[];
  }

  item(sessionId: string, nodeId: string): ItemRow | undefined {
    return this.s.item.get(sessionId, nodeId) as ItemRow | undefined;
  }

  /** The item the session asks for next: first pending by serial, then first skipped. */
  nextItem(sessionId: string): ItemRow | undefined {
    return this.s.next.get(sessionId) as ItemRow | undefined;
  }

  updateItem(row: ItemRow): void {
    this.s.setItem.run(row);
  }

  logWrite(row: WriteLogRow): void {
    this.s.insertWrite.run(row);
  }

  writesForNode(nodeId: string): WriteLogRow[] {
    return this.s.writesForNode.all(nodeId) as WriteLogRow[];
  }
}
