import { randomBytes } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { captureState, UNPAIRED_WRITER } from '../../db/capture.ts';
import { AppError, ConflictError } from '../../platform/errors.ts';
import {
  PUSH_GAP_ERROR,
  UNKNOWN_INCARNATION_ERROR,
  type ChangesPageT,
  type PushInput,
  type PushResultT,
  type SyncChangeT,
  type SyncScanT,
} from '../../schemas/sync.ts';
import { ChangeApplier, type ApplyContext, type ConflictKind, type EntityName } from './apply.ts';
import { ClockAheadError } from './hlc.ts';
import type { LeaseRegistry } from './registry.ts';
import type { SyncRepo } from './repo.ts';

export class PushGapError extends AppError {
  constructor(expected: number) {
    super(409, PUSH_GAP_ERROR, { expected_seq: String(expected) });
  }
}

interface OutboxRow {
  seq: number;
  entity: EntityName;
  entity_id: string;
  op: 'upsert' | 'delete';
  fields: string;
  hlc: string;
  writer: string;
  group_id: string | null;
  hold: string | null;
}

const toChange = (r: OutboxRow): SyncChangeT => ({
  seq: r.seq,
  entity: r.entity,
  entity_id: r.entity_id,
  op: r.op,
  fields: JSON.parse(r.fields) as SyncChangeT['fields'],
  hlc: r.hlc,
  writer: r.writer,
  group: r.group_id,
});

/** Extends a page of rows (in seq order) so that no transaction group and no batch is cut in two. */
function wholeGroups(db: Database, rows: OutboxRow[], extra: string): OutboxRow[] {
  if (rows.length === 0) return rows;
  const groupEnd = db.prepare(`SELECT MAX(seq) FROM sync_outbox WHERE group_id = ? ${extra}`).pluck();
  const holdEnd = db.prepare(`SELECT MAX(seq) FROM sync_outbox WHERE hold = ? ${extra}`).pluck();
  let end = rows[rows.length - 1]!.seq;
  for (;;) {
    let want = end;
    for (const r of rows) {
      if (r.group_id) want = Math.max(want, (groupEnd.get(r.group_id) as number | null) ?? 0);
      if (r.hold) want = Math.max(want, (holdEnd.get(r.hold) as number | null) ?? 0);
    }
    if (want <= end) return rows;
    const more = db.prepare(`SELECT * FROM sync_outbox WHERE seq > ? AND seq <= ? ${extra} ORDER BY seq`).all(end, want) as OutboxRow[];
    rows = rows.concat(more);
    end = want;
  }
}

/** Site side: what is waiting to be pushed, and the scans recorded since the last push. */
export class SiteChanges {
  private readonly db: Database;
  private readonly repo: SyncRepo;

  constructor(db: Database, repo: SyncRepo) {
    this.db = db;
    this.repo = repo;
  }

  pendingCount(): number {
    return this.db.prepare('SELECT COUNT(*) FROM sync_outbox WHERE pushed = 0').pluck().get() as number;
  }

  /** The highest seq the remote has acknowledged (all rows up to it are pushed). */
  ackedSeq(): number {
    return Number(this.repo.getSetting('sync.acked_seq') ?? '0');
  }

  /**
   * The next changes to push, in seq order: whole transaction groups, and a batch only once it has
   * finished generating (then all of it at once). Stops before the first row of a batch still
   * generating, so everything after it waits too (order is kept).
   */
  nextChanges(limit: number): SyncChangeT[] {
    const rows = this.db.prepare('SELECT * FROM sync_outbox WHERE pushed = 0 ORDER BY seq LIMIT ?').all(limit) as OutboxRow[];
    const status = this.db.prepare('SELECT status FROM batches WHERE id = ?').pluck();
    const ready: OutboxRow[] = [];
    for (const r of rows) {
      if (r.hold) {
        const s = status.get(r.hold) as string | undefined;
        if (s === 'pending' || s === 'generating') break;
      }
      ready.push(r);
    }
    // Rows written before this instance had a writer id (CLI, the snapshot of migration 055) go
    // under the current one: the remote accepts only this site's writer ids.
    const writer = captureState(this.db).writer;
    return wholeGroups(this.db, ready, 'AND pushed = 0').map((r) => toChange(r.writer === UNPAIRED_WRITER ? { ...r, writer } : r));
  }

  /** Scans recorded since the last acknowledged one, with their global ids. */
  nextScans(limit: number): Array<SyncScanT & { local: number }> {
    const after = Number(this.repo.getSetting('sync.scans_acked') ?? '0');
    const rows = this.db
      .prepare(
        `SELECT id, node_id, ts, device_type, os, browser, country, source, rule_id, outcome, is_bot, visitor_hash,
                (SELECT writer FROM sync_scan_epochs WHERE first_id <= scan_events.id ORDER BY first_id DESC LIMIT 1) AS writer
           FROM scan_events WHERE id > ? AND sync_id IS NULL ORDER BY id LIMIT ?`,
      )
      .all(after, limit) as Array<Omit<SyncScanT, 'id'> & { id: number; writer: string | null }>;
    const fallback = captureState(this.db).writer;
    return rows.map(({ id, writer, ...s }) => ({ ...s, id: `${writer ?? fallback}:${id}`, local: id, is_bot: s.is_bot ? 1 : 0 }));
  }

  /** After an acknowledged push: everything up to ackedSeq is pushed, scans up to lastScan too. */
  markPushed(ackedSeq: number, lastScan: number | null): void {
    this.db.prepare('UPDATE sync_outbox SET pushed = 1 WHERE pushed = 0 AND seq <= ?').run(ackedSeq);
    if (ackedSeq > this.ackedSeq()) this.repo.setSetting('sync.acked_seq', String(ackedSeq));
    if (lastScan !== null) this.repo.setSetting('sync.scans_acked', String(lastScan));
  }

  /** The remote has less than we thought (it was restored): push again what follows `expected`. */
  rewind(expected: number): void {
    this.db.prepare('UPDATE sync_outbox SET pushed = 0 WHERE pulled = 0 AND entity <> ? AND seq > ?').run('api_key', expected);
    this.repo.setSetting('sync.acked_seq', String(expected));
  }

  /**
   * A new incarnation pushes its whole history again (rows keep their writer and HLC, so the
   * remote applies nothing twice): when the remote was restored from a backup it may have lost
   * what it had acknowledged, and a copy of the data cannot know what the other copy pushed.
   */
  rewindAll(): void {
    this.rewind(0);
    this.repo.setSetting('sync.scans_acked', '0');
  }

  /** A new incarnation records scans under its own writer id from the next scan on. */
  startScanEpoch(writer: string): void {
    const next = ((this.db.prepare('SELECT COALESCE(MAX(id), 0) FROM scan_events').pluck().get() as number) ?? 0) + 1;
    this.db.prepare('INSERT OR REPLACE INTO sync_scan_epochs (first_id, writer) VALUES (?, ?)').run(next, writer);
  }

  hasScanEpoch(): boolean {
    return this.db.prepare('SELECT 1 FROM sync_scan_epochs LIMIT 1').pluck().get() !== undefined;
  }
}

interface Cursor {
  v: 1;
  feed: string;
  seq: number;
}

/**
 * Remote side: applies pushes (idempotent by seq, in order, one transaction per request) and
 * serves the change feed: every change applied here, its own writes included, per organization.
 */
/** Webhook events for what sites' pushes changed here (paired sites deliver none themselves). */
export interface RemoteEvents {
  applied(orgId: string, change: SyncChangeT, effect: 'created' | 'updated' | 'deleted'): void;
  scanned(orgId: string, scans: Array<SyncScanT & { local: number }>): void;
}

export class RemoteChanges {
  /** Set by the app once the services exist. */
  events: RemoteEvents | null = null;
  private readonly db: Database;
  private readonly repo: SyncRepo;
  private readonly registry: LeaseRegistry;
  private readonly applier: ChangeApplier;
  private readonly now: () => string;

  constructor(db: Database, repo: SyncRepo, registry: LeaseRegistry, applier: ChangeApplier, now: () => string) {
    this.db = db;
    this.repo = repo;
    this.registry = registry;
    this.applier = applier;
    this.now = now;
  }

  push(orgId: string, input: PushInput): PushResultT {
    return this.repo.transaction(() => {
      const site = this.repo.getSite(input.site_id);
      if (!site || site.org_id !== orgId) throw new ConflictError(UNKNOWN_INCARNATION_ERROR);
      this.registry.fence(input.site_id, input.incarnation, input.token, input.next_token, false);
      const state = this.db
        .prepare('SELECT last_seq FROM sync_push_state WHERE site_id = ? AND incarnation = ?')
        .pluck()
        .get(input.site_id, input.incarnation) as number | undefined;
      // A retry (the answer to this token was lost) is applied like any push, not answered from
      // memory: it may carry more than the lost call did (writes and scans made since), and seqs
      // and scan ids already make re-applying harmless. Answering without applying acknowledged
      // scans the remote never stored, and the site then dropped them.
      // A new incarnation starts where the site says it is: its earlier rows went under the old one.
      let last = state ?? input.after_seq;
      if (input.after_seq > last) throw new PushGapError(last);
      const hlc = captureState(this.db).hlc;
      try {
        for (const c of input.changes) hlc.check(c.hlc);
      } catch (err) {
        if (err instanceof ClockAheadError) throw new ConflictError(err.message);
        throw err;
      }
      const prefix = `${input.site_id}/`;
      const ctx: ApplyContext = {
        orgId,
        now: this.now(),
        checkSlug: (slug) => (this.registry.validateSlug(orgId, input.site_id, slug).ok ? null : 'slug_outside_lease'),
        conflict: (kind, detail) => this.conflict(kind, { ...detail, site_id: input.site_id }),
        applied: (change, effect) => this.events?.applied(orgId, change, effect),
      };
      for (const change of input.changes) {
        if (change.seq <= last) continue; // already applied: a duplicate or a retry
        if (!change.writer.startsWith(prefix)) throw new ConflictError(`Change ${change.seq} names writer ${change.writer}, not this site`);
        // API keys only come down: a site can never create or change a key of the remote.
        if (change.entity !== 'api_key') this.applier.apply(change, ctx);
        last = change.seq;
      }
      const scans = this.applier.applyScans(input.scans, orgId);
      if (scans.length) this.events?.scanned(orgId, scans);
      this.db
        .prepare(
          `INSERT INTO sync_push_state (site_id, incarnation, last_seq) VALUES (?, ?, ?)
             ON CONFLICT (site_id, incarnation) DO UPDATE SET last_seq = excluded.last_seq`,
        )
        .run(input.site_id, input.incarnation, last);
      return { token: input.next_token, acked_seq: last, scans_acked: input.scans.length };
    });
  }

  changes(orgId: string, writer: string, cursor: string | undefined, limit: number): ChangesPageT {
    const feed = this.feedId();
    const head = (this.db.prepare('SELECT COALESCE(MAX(seq), 0) FROM sync_outbox WHERE org_id = ?').pluck().get(orgId) as number) ?? 0;
    let after = decodeCursor(cursor, feed);
    // A cursor beyond the head comes from before a restore of this remote: start over (replaying
    // is harmless, every field is last-writer-wins and deletes are final).
    if (after > head) after = 0;
    const extra = 'AND org_id = ?';
    let rows = this.db
      .prepare(`SELECT * FROM sync_outbox WHERE seq > ? ${extra} ORDER BY seq LIMIT ?`)
      .all(after, orgId, limit) as OutboxRow[];
    rows = wholeGroupsOrg(this.db, rows, orgId);
    const end = rows.length ? rows[rows.length - 1]!.seq : after;
    return {
      // No echoes: the asking writer already has its own changes.
      changes: rows.filter((r) => r.writer !== writer).map(toChange),
      next_cursor: encodeCursor({ v: 1, feed, seq: end }),
      more: end < head,
    };
  }

  private conflict(kind: ConflictKind, detail: Record<string, unknown>): void {
    this.repo.insertConflict(kind, detail, this.now());
  }

  private feedId(): string {
    let id = this.repo.getSetting('sync.feed_id');
    if (!id) {
      id = randomBytes(8).toString('hex');
      this.repo.setSetting('sync.feed_id', id);
    }
    return id;
  }
}

function wholeGroupsOrg(db: Database, rows: OutboxRow[], orgId: string): OutboxRow[] {
  if (rows.length === 0) return rows;
  const last = rows[rows.length - 1]!;
  if (!last.group_id) return rows;
  const end = db.prepare('SELECT MAX(seq) FROM sync_outbox WHERE group_id = ?').pluck().get(last.group_id) as number;
  if (end <= last.seq) return rows;
  return rows.concat(db.prepare('SELECT * FROM sync_outbox WHERE seq > ? AND seq <= ? AND org_id = ? ORDER BY seq').all(last.seq, end, orgId) as OutboxRow[]);
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

/** The seq to read after; 0 (a full resync) for no cursor or one from another feed. */
export function decodeCursor(cursor: string | undefined, feed: string): number {
  if (!cursor) return 0;
  try {
    const c = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as Partial<Cursor>;
    if (c.v === 1 && c.feed === feed && Number.isInteger(c.seq) && c.seq! >= 0) return c.seq!;
  } catch {
    // fall through
  }
  return 0;
}
