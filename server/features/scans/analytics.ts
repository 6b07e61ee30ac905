/**
 * Scan analytics (DESIGN §3 "Scans and analytics"). Human scans only: bots and link previewers
 * are recorded in scan_events but never counted here. Figures come from hourly roll-ups that a
 * background step folds from scan_events (and that every query first brings up to date), so a
 * query reads at most one row per node, hour and dimension value instead of every scan.
 */
import { setTimeout as sleep, setImmediate as nextTurn } from 'node:timers/promises';
import type { Store } from '../../db/store.ts';
import type { Clock } from '../../platform/clock.ts';
import { ValidationError } from '../../platform/errors.ts';
import type { Interval } from '../../schemas/analytics.ts';
import type { FunctionType } from '../../schemas/common.ts';
import type { ScanSource } from '../../schemas/tapProofs.ts';
import { AnalyticsRepo, DIMENSIONS, type BotFilter, type Dimension, type FoldResult, type Scope } from './analyticsRepo.ts';
import type { ScanEventRow } from './repo.ts';

const HOUR = 3_600_000;
const MAX_BUCKETS = 2000;
const ROLLUP_CHUNK = 5000;
/** Background fold on SQLite: events per chunk (one short transaction, ~10 ms on the event loop). */
const FOLD_CHUNK = 500;
/**
 * On PostgreSQL the fold's work is the database server's, not the event loop's (the scans are
 * answered while a chunk's statements run), and its cost is mostly per roll-up row rewritten,
 * which a chunk rewrites once whatever its number of events (every update is a new row version
 * and index entries): at chunks of 500 the fold kept up with 350 of 5,000 scans/s written
 * (`fold-rate`, BENCH_FOLD_MODE=rows, docs/benchmarks.md).
 */
const POSTGRES_FOLD_CHUNK = 5000;

/** Events per chunk of the background fold on this dialect (benchmarks time the fold in them). */
export function foldChunkSize(dialect: Store['dialect']): number {
  return dialect === 'postgres' ? POSTGRES_FOLD_CHUNK : FOLD_CHUNK;
}
/** Under load, the unfolded events the background fold lets wait (about 0.3 s for a query to fold). */
const BACKLOG_LIMIT = 10_000;
/**
 * Under load, the share of each background step the fold may spend bringing the backlog back to
 * its limit (the rest of the event loop is the scans'): a quarter at the limit, growing with the
 * backlog (half at twice the limit) up to MAX_LOAD_FOLD_SHARE, so the fold settles where it keeps
 * up with the scans instead of falling behind for good. Measured with `npm run bench -- fold-rate`
 * on a quiet machine, a fixed quarter folded 3,817 of 4,507 scans/s (SQLite) and 1,883 of 3,098
 * (PostgreSQL): the backlog grew all the while (docs/benchmarks.md).
 */
const LOAD_FOLD_SHARE = 0.25;
const MAX_LOAD_FOLD_SHARE = 0.75;

/** The share of a step the fold may take with `backlog` unfolded events under load. */
export function loadFoldShare(backlog: number, backlogLimit: number): number {
  return Math.min(MAX_LOAD_FOLD_SHARE, LOAD_FOLD_SHARE * Math.max(1, backlog / backlogLimit));
}
/**
 * PostgreSQL: how long a query waits for transactions that were running when it came (a scan
 * committed before it is folded only once every older transaction is done) before it answers
 * with what could be folded.
 */
const HORIZON_WAIT_MS = 5000;

export interface RangeInput {
  from?: string;
  to?: string;
  interval?: Interval;
}

export interface Range {
  fromHour: number;
  toHour: number;
  interval: Interval;
}

/**
 * Bucket number of an epoch hour, and the bucket's first hour. Days and weeks are UTC; weeks start
 * on Monday. `daySql` maps an epoch `day` column to the same bucket (daily visitor sets).
 */
const BUCKETS: Record<Interval, { sql: string; daySql: string; of: (hour: number) => number; start: (bucket: number) => number }> = {
  hour: { sql: 'hour', daySql: '', of: (h) => h, start: (b) => b },
  day: { sql: '(hour / 24)', daySql: 'day', of: (h) => Math.floor(h / 24), start: (b) => b * 24 },
  // 1970-01-01 was a Thursday: shifting by 3 days makes weeks start on Monday.
  week: { sql: '((hour / 24 + 3) / 7)', daySql: '((day + 3) / 7)', of: (h) => Math.floor((Math.floor(h / 24) + 3) / 7), start: (b) => (b * 7 - 3) * 24 },
};

/** A node's split-test variants (its traffic_split rules) and its own function type. */
export interface SplitInput {
  own_function_type: FunctionType;
  variants: Array<{ id: string; weight: number; enabled: boolean; function_type: FunctionType; created_at: string }>;
}

export interface VariantFigures {
  rule_id: string | null;
  weight: number;
  enabled: boolean;
  function_type: FunctionType;
  scans: number;
  unique_visitors: number;
}

export interface Breakdown {
  value: string | null;
  scans: number;
}

export interface SeriesBucket {
  start: string;
  scans: number;
  unique_visitors: number;
}

export class ScanAnalytics {
  private readonly store: Store;
  private readonly repo: AnalyticsRepo;
  private readonly clock: Clock;
  /** Events per chunk of the background fold and of caughtUp. */
  private readonly chunk: number;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(store: Store, clock: Clock) {
    this.store = store;
    this.repo = new AnalyticsRepo(store.dialect);
    this.clock = clock;
    this.chunk = foldChunkSize(store.dialect);
  }

  /**
   * Background folding, on this thread, in chunks of 500 events with the event loop free between
   * chunks. While scans are quiet (none for a second, per `lastScanAt`) it folds everything. Under
   * a sustained load scans come first, but above `BACKLOG_LIMIT` chunks are folded until it is
   * back at the limit, within a share of each second that grows with the backlog (`loadFoldShare`; until 2026-11-26 one chunk a
   * second: ~500 scans/s sustained; chunks are not made smaller or more frequent, which costs far
   * more per event, each commit rewriting the same roll-up pages): every query folds what
   * is pending before it reads (in chunks, caughtUp), so an unbounded backlog would make every
   * query slow (a busy day of steady scans never has a quiet second). On PostgreSQL each process
   * does this; a chunk another process is folding is skipped, not waited for.
   */
  start(lastScanAt: () => number = () => 0, options: { backlogLimit?: number; stepMs?: number } = {}): void {
    if (this.timer) return;
    const backlogLimit = options.backlogLimit ?? BACKLOG_LIMIT;
    const stepMs = options.stepMs ?? 1000;
    const steps = async () => {
      const began = performance.now();
      let share: number | null = null;
      for (;;) {
        if (!this.timer) return;
        const quiet = this.clock.now() - lastScanAt() >= 1000;
        if (!quiet) {
          const backlog = await this.repo.backlog(this.store.db);
          if (backlog <= backlogLimit) return;
          share ??= loadFoldShare(backlog, backlogLimit);
        }
        const { read } = await this.foldChunk(this.chunk, true);
        if (read < this.chunk) return;
        // Quiet: go on at once. Under load: chunks until the backlog is back at its limit, on
        // SQLite within the step's share (wall time: the event loop is free between chunks). On
        // PostgreSQL the chunk's work is the database's and the event loop answers scans while
        // it waits, so no share: with one, the fold kept up with 1,000 of 5,000 scans/s.
        if (!quiet && this.store.dialect === 'sqlite' && performance.now() - began >= stepMs * (share ?? LOAD_FOLD_SHARE)) return;
        await nextTurn();
      }
    };
    // A chain of chunks in progress goes on by itself; the interval only starts one.
    this.timer = setInterval(() => {
      this.running ??= steps()
        .catch(() => {
          // busy: next tick
        })
        .finally(() => {
          this.running = null;
        });
    }, stepMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One chunk in its own transaction. */
  private foldChunk(max: number, skipIfBusy = false): Promise<FoldResult> {
    return this.store.transaction((tx) => this.repo.fold(tx, max, { skipIfBusy }));
  }

  /**
   * Folds every scan recorded before the call, a chunk at a time with the event loop free between
   * chunks. The API awaits it before a query, so a large backlog (after a burst of scans faster
   * than the background fold keeps up with) makes that query wait, not the scans being answered
   * meanwhile; the query's own catchUp() then has only the last moment's scans left.
   */
  async caughtUp(): Promise<void> {
    if (this.store.dialect === 'postgres') return this.caughtUpShared();
    // At most the backlog of the call (later scans are the query's own catchUp's); fewer than a
    // chunk read means nothing is left.
    for (let left = await this.repo.backlog(this.store.db); left > 0 && (await this.foldChunk(this.chunk)).read === this.chunk; left -= this.chunk) {
      await nextTurn();
    }
  }

  /**
   * PostgreSQL: a scan committed before the call is below the transactions that had started by
   * then; the fold reaches it once every transaction older than it is done (analyticsRepo.ts). So
   * fold until the fold's horizon passes that point, waiting briefly for transactions still
   * running (scan batches and API writes take milliseconds), at most HORIZON_WAIT_MS.
   */
  private async caughtUpShared(): Promise<void> {
    const target = await this.repo.transactionsNow(this.store.db);
    const deadline = Date.now() + HORIZON_WAIT_MS;
    let pause = 1;
    for (;;) {
      const { read, horizon } = await this.foldChunk(this.chunk);
      if (read === this.chunk) {
        await nextTurn();
        continue;
      }
      if (horizon === null || horizon >= target || Date.now() >= deadline) return;
      await sleep(pause);
      pause = Math.min(pause * 2, 20);
    }
  }

  /** Folds every scan recorded so far (that can be folded: PostgreSQL, see caughtUp) into the roll-ups. */
  async catchUp(): Promise<void> {
    while ((await this.foldChunk(ROLLUP_CHUNK)).read === ROLLUP_CHUNK) {
      // keep folding
    }
  }

  range(input: RangeInput): Range {
    const interval = input.interval ?? 'day';
    const toMs = input.to !== undefined ? Date.parse(input.to) : this.clock.now();
    const fromMs = input.from !== undefined ? Date.parse(input.from) : toMs - 30 * 24 * HOUR;
    if (!(fromMs < toMs)) throw new ValidationError({ from: 'must be before to' });
    // Hour resolution; with day and week buckets, whole UTC days.
    const unit = interval === 'hour' ? 1 : 24;
    const fromHour = Math.floor(fromMs / HOUR / unit) * unit;
    const toHour = Math.ceil(toMs / HOUR / unit) * unit;
    const b = BUCKETS[interval];
    if (b.of(toHour - 1) - b.of(fromHour) + 1 > MAX_BUCKETS) {
      throw new ValidationError({ interval: `gives more than ${MAX_BUCKETS} buckets for this range; use a longer interval or a shorter range` });
    }
    return { fromHour, toHour, interval };
  }

  private async series(scope: Scope, r: Range): Promise<SeriesBucket[]> {
    const db = this.store.db;
    const b = BUCKETS[r.interval];
    const [scanRows, visitorRows] = await Promise.all([
      this.repo.seriesScans(db, scope, r.fromHour, r.toHour, b.sql, r.interval === 'hour'),
      r.interval === 'hour'
        ? this.repo.seriesVisitorsHourly(db, scope, r.fromHour, r.toHour)
        : this.repo.seriesVisitorsDaily(db, scope, r.fromHour / 24, r.toHour / 24, b.daySql),
    ]);
    const scans = new Map(scanRows.map((x) => [x.bucket, x.scans]));
    const visitors = new Map(visitorRows.map((x) => [x.bucket, x.visitors]));
    const out: SeriesBucket[] = [];
    for (let bucket = b.of(r.fromHour); bucket <= b.of(r.toHour - 1); bucket++) {
      out.push({
        start: new Date(b.start(bucket) * HOUR).toISOString(),
        scans: scans.get(bucket) ?? 0,
        unique_visitors: visitors.get(bucket) ?? 0,
      });
    }
    return out;
  }

  private uniqueVisitors(scope: Scope, r: Range): Promise<number> {
    return r.interval === 'hour'
      ? this.repo.uniqueVisitorsHourly(this.store.db, scope, r.fromHour, r.toHour)
      : this.repo.uniqueVisitorsDaily(this.store.db, scope, r.fromHour / 24, r.toHour / 24);
  }

  private async breakdowns(scope: Scope, r: Range): Promise<Record<Dimension, Breakdown[]>> {
    const rows = await this.repo.breakdowns(this.store.db, scope, r.fromHour, r.toHour, DIMENSIONS);
    const out = {} as Record<Dimension, Breakdown[]>;
    for (const dim of DIMENSIONS) out[dim] = (rows.get(dim) ?? []).map((x) => ({ value: x.value === '' ? null : x.value, scans: x.scans }));
    out.source = foldLegacyNfc(out.source);
    return out;
  }

  /**
   * Per-variant figures of a node's split test, from the hour its oldest variant was created (so
   * the node's own payload is not credited with the scans from before the test).
   */
  private async splitTest(nodeId: string, r: Range, split: SplitInput) {
    const oldest = Math.min(...split.variants.map((v) => Date.parse(v.created_at)));
    const sinceHour = Math.max(r.fromHour, Math.floor(oldest / HOUR));
    const rows = await this.repo.byRule(this.store.db, nodeId, sinceHour, Math.max(sinceHour, r.toHour));
    const byRule = new Map(rows.map((x) => [x.rule_key, x]));
    const figures = (key: string) => ({ scans: byRule.get(key)?.scans ?? 0, unique_visitors: byRule.get(key)?.visitors ?? 0 });
    const assigned = split.variants.reduce((sum, v) => sum + (v.enabled ? v.weight : 0), 0);
    const variants: VariantFigures[] = split.variants.map((v) => ({ rule_id: v.id, weight: v.weight, enabled: v.enabled, function_type: v.function_type, ...figures(v.id) }));
    if (assigned < 100) variants.push({ rule_id: null, weight: 100 - assigned, enabled: true, function_type: split.own_function_type, ...figures('') });
    return { since: new Date(sinceHour * HOUR).toISOString(), variants };
  }

  /*
   * The queries of an answer are independent reads of what the fold has committed: they run at
   * once (on PostgreSQL on separate pool connections), so an answer costs about its slowest query
   * instead of the sum of a dozen round trips (issue 19: 92-103 ms at 1 M scans, mostly fixed cost).
   */

  async forNode(node: { id: string; slug: string }, input: RangeInput, split?: SplitInput) {
    const r = this.range(input);
    await this.catchUp();
    const scope: Scope = { kind: 'node', id: node.id };
    const [scans, uniqueVisitors, series, breakdowns, splitTest] = await Promise.all([
      this.repo.totalScans(this.store.db, scope, r.fromHour, r.toHour),
      this.uniqueVisitors(scope, r),
      this.series(scope, r),
      this.breakdowns(scope, r),
      split && split.variants.length > 0 ? this.splitTest(node.id, r, split) : null,
    ]);
    return {
      node: { id: node.id, slug: node.slug },
      from: new Date(r.fromHour * HOUR).toISOString(),
      to: new Date(r.toHour * HOUR).toISOString(),
      interval: r.interval,
      totals: { scans, unique_visitors: uniqueVisitors },
      series,
      breakdowns,
      split_test: splitTest,
    };
  }

  async forOrg(orgId: string, input: RangeInput & { top?: number }) {
    const r = this.range(input);
    await this.catchUp();
    const scope: Scope = { kind: 'org', id: orgId };
    const db = this.store.db;
    const [scans, uniqueVisitors, nodesScanned, series, breakdowns, topNodes] = await Promise.all([
      this.repo.totalScans(db, scope, r.fromHour, r.toHour),
      this.uniqueVisitors(scope, r),
      this.repo.nodesScanned(db, orgId, r.fromHour, r.toHour),
      this.series(scope, r),
      this.breakdowns(scope, r),
      this.repo.topNodes(db, orgId, r.fromHour, r.toHour, input.top ?? 10),
    ]);
    return {
      from: new Date(r.fromHour * HOUR).toISOString(),
      to: new Date(r.toHour * HOUR).toISOString(),
      interval: r.interval,
      totals: { scans, unique_visitors: uniqueVisitors, nodes_scanned: nodesScanned },
      series,
      breakdowns,
      top_nodes: topNodes,
    };
  }

  private scanRange(input: { from?: string; to?: string }): { fromMs: number; toMs: number } {
    const fromMs = input.from !== undefined ? Date.parse(input.from) : 0;
    const toMs = input.to !== undefined ? Date.parse(input.to) : Number.MAX_SAFE_INTEGER;
    if (!(fromMs < toMs)) throw new ValidationError({ from: 'must be before to' });
    return { fromMs, toMs };
  }

  async listScans(nodeId: string, q: { from?: string; to?: string; bots?: BotFilter; limit: number; offset: number }) {
    const { fromMs, toMs } = this.scanRange(q);
    const bots = q.bots ?? 'exclude';
    const db = this.store.db;
    // The per-node order is filled by the fold, like the roll-ups.
    await this.catchUp();
    let total: number;
    if (bots === 'exclude' && q.from === undefined && q.to === undefined) {
      // All human scans of the node: the roll-ups already hold the count.
      total = await this.repo.totalScans(db, { kind: 'node', id: nodeId }, 0, Number.MAX_SAFE_INTEGER);
    } else {
      total = await this.repo.countScans(db, nodeId, fromMs, toMs, bots);
    }
    return { rows: (await this.repo.listScans(db, nodeId, fromMs, toMs, bots, q.limit, q.offset)).map(toApiScan), total };
  }

  /**
   * All of a node's scans in the range, newest first, a page at a time (the CSV export): the
   * caller can free the event loop and wait for its client between pages, and each page is a
   * keyset query, so a node with millions of scans never holds a cursor open across them.
   * Folds first, like listScans; scans folded while the pages are read appear only if older
   * than the page being read.
   */
  async *scanPages(nodeId: string, q: { from?: string; to?: string; bots?: BotFilter }, pageSize = 1000): AsyncGenerator<ApiScan[]> {
    const { fromMs, toMs } = this.scanRange(q);
    const bots = q.bots ?? 'exclude';
    await this.catchUp();
    let before = { ts: Number.MAX_SAFE_INTEGER, id: Number.MAX_SAFE_INTEGER };
    for (;;) {
      const rows = await this.repo.scansBefore(this.store.db, nodeId, fromMs, toMs, bots, before, pageSize);
      if (rows.length > 0) yield rows.map(toApiScan);
      if (rows.length < pageSize) return;
      const last = rows[rows.length - 1] as ScanEventRow;
      before = { ts: last.ts, id: last.id };
    }
  }
}

export type ApiScan = ReturnType<typeof toApiScan>;

export function toApiScan(row: ScanEventRow) {
  return {
    id: row.id,
    timestamp: new Date(row.ts).toISOString(),
    device_type: row.device_type,
    os: row.os,
    browser: row.browser,
    country: row.country,
    // 'nfc' was written before migration 074 (and may still arrive from a site on an older release).
    source: (row.source === 'nfc' ? 'nfc_unverified' : row.source) as ScanSource,
    rule_id: row.rule_id,
    outcome: row.outcome,
    bot: row.is_bot === 1,
    visitor: row.visitor_hash,
  };
}

/**
 * Source 'nfc' (before migration 074, or pushed by a site on an older release) is what is now
 * called nfc_unverified: a tag URL without a proof. Counted there, order by scans kept.
 */
function foldLegacyNfc(rows: Breakdown[]): Breakdown[] {
  const legacy = rows.find((x) => x.value === 'nfc');
  if (!legacy) return rows;
  const rest = rows.filter((x) => x !== legacy);
  const unverified = rest.find((x) => x.value === 'nfc_unverified');
  if (unverified) unverified.scans += legacy.scans;
  else rest.push({ value: 'nfc_unverified', scans: legacy.scans });
  return rest.sort((a, b) => b.scans - a.scans);
}

export const SCAN_CSV_HEADER = ['id', 'timestamp', 'device_type', 'os', 'browser', 'country', 'source', 'rule_id', 'outcome', 'bot', 'visitor'] as const;
