import { randomBytes } from 'node:crypto';
import { type CaptureState, UNPAIRED_WRITER } from '../../db/capture.ts';
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
import type { ApplyContext, ChangeApplier, ConflictKind } from './apply.ts';
import { ClockAheadError } from './hlc.ts';
import type { LeaseRegistry } from './registry.ts';
import type { OutboxRow, ReplicationRepo, SyncRepo } from './repo.ts';

export class PushGapError extends AppError {
  constructor(expected: number) {
    super(409, PUSH_GAP_ERROR, { expected_seq: String(expected) });
  }
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

/** Extends a page of pending rows (in seq order) so that no transaction group and no batch is cut in two. */
function wholeGroups(repo: ReplicationRepo, rows: OutboxRow[], orgId: string): OutboxRow[] {
  if (rows.length === 0) return rows;
  let end = rows[rows.length - 1]!.seq;
  for (;;) {
    let want = end;
    for (const r of rows) {
      if (r.group_id) want = Math.max(want, repo.pendingEnd('group', r.group_id));
      if (r.hold) want = Math.max(want, repo.pendingEnd('hold', r.hold));
    }
    if (want <= end) return rows;
    rows = rows.concat(repo.pendingBetween(end, want, orgId));
    end = want;
  }
}

/** Site side: what is waiting to be pushed, and the scans recorded since the last push. */
export class SiteChanges {
  private readonly rows: ReplicationRepo;
  private readonly settings: SyncRepo;
  private readonly capture: CaptureState;

  constructor(rows: ReplicationRepo, settings: SyncRepo, capture: CaptureState) {
    this.rows = rows;
    this.settings = settings;
    this.capture = capture;
  }

  /** Rows of `orgId` (the organization bound to the remote) waiting to be pushed. */
  pendingCount(orgId: string): number {
    return this.rows.pendingCount(orgId);
  }

  /** The highest seq the remote has acknowledged (all rows up to it are pushed). */
  ackedSeq(): number {
    return Number(this.settings.getSetting('sync.acked_seq') ?? '0');
  }

  /**
   * The next changes to push, in seq order: whole transaction groups, and a batch only once it has
   * finished generating (then all of it at once). Stops before the first row of a batch still
   * generating, so everything after it waits too (order is kept).
   */
  nextChanges(orgId: string, limit: number): SyncChangeT[] {
    const ready: OutboxRow[] = [];
    for (const r of this.rows.pending(orgId, limit)) {
      if (r.hold) {
        const status = this.rows.batchStatus(r.hold);
        if (status === 'pending' || status === 'generating') break;
      }
      ready.push(r);
    }
    // Rows written before this instance had a writer id (CLI, the snapshot of migration 055) go
    // under the current one: the remote accepts only this site's writer ids.
    const writer = this.capture.writer;
    return wholeGroups(this.rows, ready, orgId).map((r) => toChange(r.writer === UNPAIRED_WRITER ? { ...r, writer } : r));
  }

  /** Scans recorded since the last acknowledged one, with their global ids. */
  nextScans(orgId: string, limit: number): Array<SyncScanT & { local: number }> {
    const after = Number(this.settings.getSetting('sync.scans_acked') ?? '0');
    return this.rows.scansAfter(after, orgId, limit).map(({ id, writer, ...s }) => ({ ...s, id: `${writer ?? this.capture.writer}:${id}`, local: id, is_bot: s.is_bot ? 1 : 0 }));
  }

  /** After an acknowledged push: everything up to ackedSeq is pushed, scans up to lastScan too. */
  markPushed(ackedSeq: number, lastScan: number | null): void {
    this.rows.markPushed(ackedSeq);
    if (ackedSeq > this.ackedSeq()) this.settings.setSetting('sync.acked_seq', String(ackedSeq));
    if (lastScan !== null) this.settings.setSetting('sync.scans_acked', String(lastScan));
  }

  /** The remote has less than we thought (it was restored): push again what follows `expected`. */
  rewind(expected: number): void {
    this.rows.rewind(expected);
    this.settings.setSetting('sync.acked_seq', String(expected));
  }

  /**
   * A new incarnation pushes its whole history again (rows keep their writer and HLC, so the
   * remote applies nothing twice): when the remote was restored from a backup it may have lost
   * what it had acknowledged, and a copy of the data cannot know what the other copy pushed.
   */
  rewindAll(): void {
    this.rewind(0);
    this.settings.setSetting('sync.scans_acked', '0');
  }

  /** A new incarnation records scans under its own writer id from the next scan on. */
  startScanEpoch(writer: string): void {
    this.rows.setScanEpoch(this.rows.maxScanId() + 1, writer);
  }

  hasScanEpoch(): boolean {
    return this.rows.hasScanEpoch();
  }
}

interface Cursor {
  v: 1;
  feed: string;
  seq: number;
  /** The last of the asking site's conflicts sent down (absent in cursors of older versions: 0). */
  c?: number;
}

/** Conflicts sent down per page, at most. */
const CONFLICTS_PER_PAGE = 100;

/** Webhook events for what sites' pushes changed here (paired sites deliver none themselves). */
export interface RemoteEvents {
  applied(orgId: string, change: SyncChangeT, effect: 'created' | 'updated' | 'deleted'): void;
  scanned(orgId: string, scans: Array<SyncScanT & { local: number }>): void;
}

/**
 * Remote side: applies pushes (idempotent by seq, in order, one transaction per request) and
 * serves the change feed: every change applied here, its own writes included, per organization.
 */
export class RemoteChanges {
  /** Set by the app once the services exist. */
  events: RemoteEvents | null = null;
  private readonly rows: ReplicationRepo;
  private readonly repo: SyncRepo;
  private readonly registry: LeaseRegistry;
  private readonly applier: ChangeApplier;
  private readonly capture: CaptureState;
  private readonly now: () => string;

  constructor(deps: { rows: ReplicationRepo; repo: SyncRepo; registry: LeaseRegistry; applier: ChangeApplier; capture: CaptureState; now: () => string }) {
    this.rows = deps.rows;
    this.repo = deps.repo;
    this.registry = deps.registry;
    this.applier = deps.applier;
    this.capture = deps.capture;
    this.now = deps.now;
  }

  push(orgId: string, input: PushInput): PushResultT {
    return this.repo.transaction(() => {
      const site = this.repo.getSite(input.site_id);
      if (!site || site.org_id !== orgId) throw new ConflictError(UNKNOWN_INCARNATION_ERROR);
      // A retry of an applied call (same next_token) is applied like any other: changes up to
      // last_seq are skipped and scans are stored once, so what the site added since (the retry
      // may carry more) is not acknowledged without being stored.
      this.registry.fence(input.site_id, input.incarnation, input.token, input.next_token, false);
      // A new incarnation starts where the site says it is: its earlier rows went under the old one.
      let last = this.rows.pushState(input.site_id, input.incarnation) ?? input.after_seq;
      if (input.after_seq > last) throw new PushGapError(last);
      try {
        for (const c of input.changes) this.capture.hlc.check(c.hlc);
      } catch (err) {
        if (err instanceof ClockAheadError) throw new ConflictError(err.message);
        throw err;
      }
      const prefix = `${input.site_id}/`;
      const ctx: ApplyContext = {
        orgId,
        now: this.now(),
        checkSlug: (slug) => (this.registry.validateSlug(orgId, input.site_id, slug).ok ? null : 'slug_outside_lease'),
        // Sent down to the site whose change lost: for an edit logged when a delete arrives, the
        // site that made the edit (its writer), not the one pushing the delete.
        conflict: (kind, detail) => this.conflict(orgId, kind, { ...detail, site_id: siteOfWriter(detail.writer) ?? input.site_id }),
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
      this.rows.setPushState(input.site_id, input.incarnation, last);
      return { token: input.next_token, acked_seq: last, scans_acked: input.scans.length };
    });
  }

  changes(orgId: string, writer: string, cursor: string | undefined, limit: number): ChangesPageT {
    const feed = this.feedId();
    const head = this.rows.feedHead(orgId);
    const position = decodeCursor(cursor, feed);
    let after = position.seq;
    // A cursor beyond the head comes from before a restore of this remote: start over (replaying
    // is harmless, every field is last-writer-wins and deletes are final).
    if (after > head) after = 0;
    let rows = this.rows.feedAfter(after, orgId, limit);
    // A page ends with a whole transaction group.
    const last = rows[rows.length - 1];
    if (last?.group_id) {
      const groupEnd = this.rows.groupEnd(last.group_id);
      if (groupEnd > last.seq) rows = rows.concat(this.rows.feedBetween(last.seq, groupEnd, orgId));
    }
    const end = rows.length ? rows[rows.length - 1]!.seq : after;
    const conflicts = this.repo.conflictsForSite(orgId, siteOfWriter(writer) ?? writer, position.c, CONFLICTS_PER_PAGE);
    const lastConflict = conflicts.length ? conflicts[conflicts.length - 1]!.id : position.c;
    return {
      // No echoes: the asking writer already has its own changes.
      changes: rows.filter((r) => r.writer !== writer).map(toChange),
      conflicts: conflicts.map((c) => ({ id: c.id, kind: c.kind, detail: JSON.parse(c.detail_json) as Record<string, unknown>, detected_at: c.detected_at })),
      next_cursor: encodeCursor({ v: 1, feed, seq: end, c: lastConflict }),
      more: end < head || conflicts.length === CONFLICTS_PER_PAGE,
    };
  }

  private conflict(orgId: string, kind: ConflictKind, detail: Record<string, unknown>): void {
    this.repo.insertConflict(kind, detail, this.now(), orgId);
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

/** The site id of a writer id `site_id/incarnation`; null for anything else. */
function siteOfWriter(writer: unknown): string | null {
  if (typeof writer !== 'string') return null;
  const slash = writer.indexOf('/');
  return slash > 0 ? writer.slice(0, slash) : null;
}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

/**
 * Where to read on: the feed seq and the last conflict sent down; 0 (a full resync) for no cursor
 * or one from another feed. Conflicts are not tied to the feed: their position survives a rebuild.
 */
export function decodeCursor(cursor: string | undefined, feed: string): { seq: number; c: number } {
  if (!cursor) return { seq: 0, c: 0 };
  try {
    const c = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as Partial<Cursor>;
    const conflict = Number.isInteger(c.c) && c.c! >= 0 ? c.c! : 0;
    if (c.v === 1 && c.feed === feed && Number.isInteger(c.seq) && c.seq! >= 0) return { seq: c.seq!, c: conflict };
    return { seq: 0, c: conflict };
  } catch {
    return { seq: 0, c: 0 };
  }
}
