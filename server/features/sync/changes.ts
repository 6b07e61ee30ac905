import { randomBytes } from 'node:crypto';
import { UNPAIRED_WRITER } from '../../db/capture.ts';
import type { ChangeCapture } from '../../db/changeCapture.ts';
import { retryRolledBack } from '../../db/rollbackRetry.ts';
import type { Executor, Store } from '../../db/store.ts';
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
import { siteOfWriter } from './conflicts.ts';
import type { SerialRanges } from './serialRanges.ts';
import type { TemplateLocks } from './templateLocks.ts';
import { ClockAheadError } from '../../platform/hlc.ts';
import type { LeaseRegistry } from './registry.ts';
import type { OutboxRow, ReplicationRepo, SyncRepo } from './repo.ts';
import { SealedFields } from './sealedFields.ts';

export class PushGapError extends AppError {
  constructor(expected: number) {
    super(409, PUSH_GAP_ERROR, { expected_seq: String(expected) });
  }
}

/** A logged change as it is sent, its sealed secrets opened (sealedFields.ts). */
const toChange = (r: OutboxRow, sealed: SealedFields): SyncChangeT =>
  sealed.toWire({
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
async function wholeGroups(db: Executor, repo: ReplicationRepo, rows: OutboxRow[], orgId: string): Promise<OutboxRow[]> {
  if (rows.length === 0) return rows;
  let end = rows[rows.length - 1]!.seq;
  for (;;) {
    let want = end;
    for (const r of rows) {
      if (r.group_id) want = Math.max(want, await repo.pendingEnd(db, 'group', r.group_id));
      if (r.hold) want = Math.max(want, await repo.pendingEnd(db, 'hold', r.hold));
    }
    if (want <= end) return rows;
    rows = rows.concat(await repo.pendingBetween(db, end, want, orgId));
    end = want;
  }
}

/** Site side: what is waiting to be pushed, and the scans recorded since the last push. */
export class SiteChanges {
  private readonly rows: ReplicationRepo;
  private readonly settings: SyncRepo;
  private readonly capture: ChangeCapture;
  private readonly store: Store;
  private readonly sealed: SealedFields;

  constructor(store: Store, rows: ReplicationRepo, settings: SyncRepo, capture: ChangeCapture, sealed: SealedFields = new SealedFields(null)) {
    this.store = store;
    this.rows = rows;
    this.settings = settings;
    this.capture = capture;
    this.sealed = sealed;
  }

  /** Rows of `orgId` (the organization bound to the remote) waiting to be pushed. */
  pendingCount(orgId: string): Promise<number> {
    return this.rows.pendingCount(this.store.db, orgId);
  }

  /** The highest seq the remote has acknowledged (all rows up to it are pushed). */
  async ackedSeq(db: Executor = this.store.db): Promise<number> {
    return Number((await this.settings.getSetting(db, 'sync.acked_seq')) ?? '0');
  }

  /**
   * The next changes to push, in seq order: whole transaction groups, and a batch only once it has
   * finished generating (then all of it at once). Stops before the first row of a batch still
   * generating, so everything after it waits too (order is kept).
   */
  async nextChanges(orgId: string, limit: number): Promise<SyncChangeT[]> {
    const db = this.store.db;
    const ready: OutboxRow[] = [];
    for (const r of await this.rows.pending(db, orgId, limit)) {
      if (r.hold) {
        const status = await this.rows.batchStatus(db, r.hold);
        if (status === 'pending' || status === 'generating') break;
      }
      ready.push(r);
    }
    // Rows written before this instance had a writer id (CLI, the snapshot of migration 055) go
    // under the current one: the remote accepts only this site's writer ids.
    const writer = this.capture.writer;
    return (await wholeGroups(db, this.rows, ready, orgId)).map((r) => toChange(r.writer === UNPAIRED_WRITER ? { ...r, writer } : r, this.sealed));
  }

  /** Scans recorded since the last acknowledged one, with their global ids. */
  async nextScans(orgId: string, limit: number): Promise<Array<SyncScanT & { local: number }>> {
    const db = this.store.db;
    const after = Number((await this.settings.getSetting(db, 'sync.scans_acked')) ?? '0');
    return (await this.rows.scansAfter(db, after, orgId, limit)).map(({ id, writer, ...s }) => ({ ...s, id: `${writer ?? this.capture.writer}:${id}`, local: id, is_bot: s.is_bot ? 1 : 0 }));
  }

  /** After an acknowledged push: everything up to ackedSeq is pushed, scans up to lastScan too. */
  async markPushed(tx: Executor, ackedSeq: number, lastScan: number | null): Promise<void> {
    await this.rows.markPushed(tx, ackedSeq);
    if (ackedSeq > (await this.ackedSeq(tx))) await this.settings.setSetting(tx, 'sync.acked_seq', String(ackedSeq));
    if (lastScan !== null) await this.settings.setSetting(tx, 'sync.scans_acked', String(lastScan));
  }

  /** The remote has less than we thought (it was restored): push again what follows `expected`. */
  async rewind(tx: Executor, expected: number): Promise<void> {
    await this.rows.rewind(tx, expected);
    await this.settings.setSetting(tx, 'sync.acked_seq', String(expected));
  }

  /**
   * A new incarnation pushes its whole history again (rows keep their writer and HLC, so the
   * remote applies nothing twice): when the remote was restored from a backup it may have lost
   * what it had acknowledged, and a copy of the data cannot know what the other copy pushed.
   */
  async rewindAll(tx: Executor): Promise<void> {
    await this.rewind(tx, 0);
    await this.settings.setSetting(tx, 'sync.scans_acked', '0');
  }

  /** A new incarnation records scans under its own writer id from the next scan on. */
  async startScanEpoch(tx: Executor, writer: string): Promise<void> {
    await this.rows.setScanEpoch(tx, (await this.rows.maxScanId(tx)) + 1, writer);
  }

  hasScanEpoch(db: Executor): Promise<boolean> {
    return this.rows.hasScanEpoch(db);
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
  applied(tx: Executor, orgId: string, change: SyncChangeT, effect: 'created' | 'updated' | 'deleted'): Promise<void>;
  scanned(tx: Executor, orgId: string, scans: Array<SyncScanT & { local: number }>): Promise<void>;
}

/**
 * Remote side: applies pushes (idempotent by seq, in order, one transaction per request) and
 * serves the change feed: every change applied here, its own writes included, per organization.
 */
export class RemoteChanges {
  /** Set by the app once the services exist. */
  events: RemoteEvents | null = null;
  /** Derived writes after a push is applied (bound nodes take their templates' locked values). */
  templateLocks: TemplateLocks | null = null;
  /** Batch serial numbering moves past batches that sites push (serialRanges.ts). */
  serialRanges: SerialRanges | null = null;
  private readonly store: Store;
  private readonly rows: ReplicationRepo;
  private readonly repo: SyncRepo;
  private readonly registry: LeaseRegistry;
  private readonly applier: ChangeApplier;
  private readonly capture: ChangeCapture;
  private readonly now: () => string;
  private feed: string | null = null;
  private readonly sealed: SealedFields;

  constructor(deps: { store: Store; rows: ReplicationRepo; repo: SyncRepo; registry: LeaseRegistry; applier: ChangeApplier; capture: ChangeCapture; now: () => string; sealed?: SealedFields }) {
    this.sealed = deps.sealed ?? new SealedFields(null);
    this.store = deps.store;
    this.rows = deps.rows;
    this.repo = deps.repo;
    this.registry = deps.registry;
    this.applier = deps.applier;
    this.capture = deps.capture;
    this.now = deps.now;
  }

  /**
   * Applies a site's push in one transaction. On PostgreSQL a push can meet a fold chunk or
   * another push in a deadlock; the loser's whole transaction is rolled back and applied again,
   * rather than answered as a 500 (a push is idempotent: applied changes are skipped by seq).
   */
  push(orgId: string, input: PushInput): Promise<PushResultT> {
    return retryRolledBack(() => this.pushOnce(orgId, input));
  }

  private pushOnce(orgId: string, input: PushInput): Promise<PushResultT> {
    return this.store.transaction(async (tx) => {
      // One push of a site at a time, whichever process answers (PostgreSQL): a retry racing the
      // original waits for it, then finds its changes applied (seq <= last_seq) and skips them.
      await this.repo.lockSite(tx, input.site_id);
      const site = await this.repo.getSite(tx, input.site_id);
      if (!site || site.org_id !== orgId) throw new ConflictError(UNKNOWN_INCARNATION_ERROR);
      // A retry of an applied call (same next_token) is applied like any other: changes up to
      // last_seq are skipped and scans are stored once, so what the site added since (the retry
      // may carry more) is not acknowledged without being stored.
      await this.registry.fence(tx, input.site_id, input.incarnation, input.token, input.next_token, false);
      // A new incarnation starts where the site says it is: its earlier rows went under the old one.
      let last = (await this.rows.pushState(tx, input.site_id, input.incarnation)) ?? input.after_seq;
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
        checkSlug: async (slug) => ((await this.registry.validateSlug(orgId, input.site_id, slug, tx)).ok ? null : 'slug_outside_lease'),
        // Sent down to the site whose change lost: for an edit logged when a delete arrives, the
        // site that made the edit (its writer), not the one pushing the delete.
        conflict: (kind, detail) => this.conflict(tx, orgId, kind, { ...detail, site_id: siteOfWriter(detail.writer) ?? input.site_id }),
        applied: async (change, effect) => this.events?.applied(tx, orgId, change, effect),
      };
      const fresh = input.changes.filter((c) => c.seq > last && c.entity !== 'api_key');
      // The entities this push touches, locked in one order (PostgreSQL): two pushes touching the
      // same entities in different orders wait for each other instead of deadlocking.
      await this.rows.lockEntities(tx, fresh.map((c) => ({ entity: c.entity, id: c.entity_id })));
      for (const change of input.changes) {
        if (change.seq <= last) continue; // already applied: a duplicate or a retry
        if (!change.writer.startsWith(prefix)) throw new ConflictError(`Change ${change.seq} names writer ${change.writer}, not this site`);
        // API keys only come down: a site can never create or change a key of the remote.
        if (change.entity !== 'api_key') await this.applier.apply(tx, change, ctx);
        last = change.seq;
      }
      await this.templateLocks?.afterApply(tx, orgId, fresh, ctx.now);
      await this.serialRanges?.afterApply(tx, orgId, fresh);
      const scans = await this.applier.applyScans(tx, input.scans, orgId);
      if (scans.added.length) await this.events?.scanned(tx, orgId, scans.added);
      await this.rows.setPushState(tx, input.site_id, input.incarnation, last);
      return { token: input.next_token, acked_seq: last, scans_acked: scans.stored, scans_refused: scans.refused };
    });
  }

  async changes(orgId: string, writer: string, cursor: string | undefined, limit: number): Promise<ChangesPageT> {
    const db = this.store.db;
    const feed = await this.feedId();
    const head = await this.rows.feedHead(db, orgId);
    const position = decodeCursor(cursor, feed);
    let after = position.seq;
    // A cursor beyond the head comes from before a restore of this remote: start over (replaying
    // is harmless, every field is last-writer-wins and deletes are final).
    if (after > head) after = 0;
    let rows = await this.rows.feedAfter(db, after, orgId, limit);
    // A page ends with a whole transaction group.
    const last = rows[rows.length - 1];
    if (last?.group_id) {
      const groupEnd = await this.rows.groupEnd(db, last.group_id);
      if (groupEnd > last.seq) rows = rows.concat(await this.rows.feedBetween(db, last.seq, groupEnd, orgId));
    }
    const end = rows.length ? rows[rows.length - 1]!.seq : after;
    const conflicts = await this.repo.conflictsForSite(db, orgId, siteOfWriter(writer) ?? writer, position.c, CONFLICTS_PER_PAGE);
    const lastConflict = conflicts.length ? conflicts[conflicts.length - 1]!.id : position.c;
    return {
      // No echoes: the asking writer already has its own changes.
      changes: rows.filter((r) => r.writer !== writer).map((r) => toChange(r, this.sealed)),
      conflicts: conflicts.map((c) => ({ id: c.id, kind: c.kind, detail: JSON.parse(c.detail_json) as Record<string, unknown>, detected_at: c.detected_at })),
      next_cursor: encodeCursor({ v: 1, feed, seq: end, c: lastConflict }),
      more: end < head || conflicts.length === CONFLICTS_PER_PAGE,
    };
  }

  private conflict(tx: Executor, orgId: string, kind: ConflictKind, detail: Record<string, unknown>): Promise<void> {
    return this.repo.insertConflict(tx, kind, detail, this.now(), orgId);
  }

  /** This feed's id, made once (by whichever process asks first) and kept. */
  private async feedId(): Promise<string> {
    this.feed ??= await this.repo.ensureSetting(this.store.db, 'sync.feed_id', randomBytes(8).toString('hex'));
    return this.feed;
  }
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
