/**
 * Scan analytics (DESIGN §3 "Scans and analytics"). Human scans only: bots and link previewers
 * are recorded in scan_events but never counted here. Figures come from hourly roll-ups that a
 * background step folds from scan_events (and that every query first brings up to date), so a
 * query reads at most one row per node, hour and dimension value instead of every scan.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Database } from 'better-sqlite3';
import type { Clock } from '../../platform/clock.ts';
import { ValidationError } from '../../platform/errors.ts';
import type { Interval } from '../../schemas/analytics.ts';
import { AnalyticsRepo, DIMENSIONS, type Dimension, type Scope, type ScanEventRow } from './repo.ts';

const HOUR = 3_600_000;
const MAX_BUCKETS = 2000;
const ROLLUP_CHUNK = 5000;
/** Background fold: events per chunk (one short transaction, ~10 ms on the event loop). */
const FOLD_CHUNK = 500;
/** Under load, the unfolded events the background fold lets wait (about 0.3 s for a query to fold). */
const BACKLOG_LIMIT = 10_000;

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
  private readonly repo: AnalyticsRepo;
  private readonly clock: Clock;
  private timer: NodeJS.Timeout | null = null;
  private chain: NodeJS.Immediate | null = null;

  constructor(db: Database, clock: Clock) {
    this.repo = new AnalyticsRepo(db);
    this.clock = clock;
  }

  /**
   * Background folding, on this thread, in chunks of 500 events with the event loop free between
   * chunks. While scans are quiet (none for a second, per `lastScanAt`) it folds everything. Under
   * a sustained load scans come first, but above `BACKLOG_LIMIT` one chunk a second is folded
   * anyway (enough for ~500 scans/s sustained, ~1 % of a core; smaller or more frequent chunks
   * cost far more per event, each commit rewriting the same roll-up pages): every query folds what
   * is pending before it reads (in chunks, caughtUp), so an unbounded backlog would make every
   * query slow (a busy day of steady scans never has a quiet second).
   */
  start(lastScanAt: () => number = () => 0, options: { backlogLimit?: number; stepMs?: number } = {}): void {
    if (this.timer) return;
    const backlogLimit = options.backlogLimit ?? BACKLOG_LIMIT;
    const stepMs = options.stepMs ?? 1000;
    const step = () => {
      this.chain = null;
      if (!this.timer) return;
      const quiet = this.clock.now() - lastScanAt() >= 1000;
      let read: number;
      try {
        if (!quiet && this.repo.backlog() <= backlogLimit) return;
        read = this.repo.rollUp(FOLD_CHUNK);
      } catch {
        return; // busy: next tick
      }
      // Quiet: go on at once (the event loop free between chunks). Under load: one chunk per tick.
      if (read === FOLD_CHUNK && quiet) this.chain = setImmediate(step);
    };
    // A chain of chunks in progress goes on by itself; the interval only starts one.
    this.timer = setInterval(() => this.chain === null && step(), stepMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.chain) clearImmediate(this.chain);
    this.timer = null;
    this.chain = null;
  }

  /**
   * Folds every scan recorded before the call, a chunk at a time with the event loop free between
   * chunks. The API awaits it before a query, so a large backlog (after a burst of scans faster
   * than the background fold keeps up with) makes that query wait, not the scans being answered
   * meanwhile; the query's own catchUp() then has only the last moment's scans left.
   */
  async caughtUp(): Promise<void> {
    // At most the backlog of the call (later scans are the query's own catchUp's); fewer than a
    // chunk read means nothing is left.
    for (let left = this.repo.backlog(); left > 0 && this.repo.rollUp(FOLD_CHUNK) === FOLD_CHUNK; left -= FOLD_CHUNK) {
      await nextTurn();
    }
  }

  /** Folds every scan recorded so far into the roll-ups, at once. */
  catchUp(): void {
    while (this.repo.rollUp(ROLLUP_CHUNK) === ROLLUP_CHUNK) {
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

  private series(scope: Scope, r: Range): SeriesBucket[] {
    const b = BUCKETS[r.interval];
    const scans = new Map(this.repo.seriesScans(scope, r.fromHour, r.toHour, b.sql).map((x) => [x.bucket, x.scans]));
    const visitorRows =
      r.interval === 'hour'
        ? this.repo.seriesVisitorsHourly(scope, r.fromHour, r.toHour)
        : this.repo.seriesVisitorsDaily(scope, r.fromHour / 24, r.toHour / 24, b.daySql);
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

  private uniqueVisitors(scope: Scope, r: Range): number {
    return r.interval === 'hour'
      ? this.repo.uniqueVisitorsHourly(scope, r.fromHour, r.toHour)
      : this.repo.uniqueVisitorsDaily(scope, r.fromHour / 24, r.toHour / 24);
  }

  private breakdowns(scope: Scope, r: Range): Record<Dimension, Breakdown[]> {
    const out = {} as Record<Dimension, Breakdown[]>;
    for (const dim of DIMENSIONS) {
      out[dim] = this.repo.breakdown(scope, r.fromHour, r.toHour, dim).map((x) => ({ value: x.value === '' ? null : x.value, scans: x.scans }));
    }
    return out;
  }

  forNode(node: { id: string; slug: string }, input: RangeInput) {
    const r = this.range(input);
    this.catchUp();
    const scope: Scope = { kind: 'node', id: node.id };
    return {
      node: { id: node.id, slug: node.slug },
      from: new Date(r.fromHour * HOUR).toISOString(),
      to: new Date(r.toHour * HOUR).toISOString(),
      interval: r.interval,
      totals: {
        scans: this.repo.totalScans(scope, r.fromHour, r.toHour),
        unique_visitors: this.uniqueVisitors(scope, r),
      },
      series: this.series(scope, r),
      breakdowns: this.breakdowns(scope, r),
    };
  }

  forOrg(orgId: string, input: RangeInput & { top?: number }) {
    const r = this.range(input);
    this.catchUp();
    const scope: Scope = { kind: 'org', id: orgId };
    return {
      from: new Date(r.fromHour * HOUR).toISOString(),
      to: new Date(r.toHour * HOUR).toISOString(),
      interval: r.interval,
      totals: {
        scans: this.repo.totalScans(scope, r.fromHour, r.toHour),
        unique_visitors: this.uniqueVisitors(scope, r),
        nodes_scanned: this.repo.nodesScanned(orgId, r.fromHour, r.toHour),
      },
      series: this.series(scope, r),
      breakdowns: this.breakdowns(scope, r),
      top_nodes: this.repo.topNodes(orgId, r.fromHour, r.toHour, input.top ?? 10),
    };
  }

  private scanRange(input: { from?: string; to?: string }): { fromMs: number; toMs: number } {
    const fromMs = input.from !== undefined ? Date.parse(input.from) : 0;
    const toMs = input.to !== undefined ? Date.parse(input.to) : Number.MAX_SAFE_INTEGER;
    if (!(fromMs < toMs)) throw new ValidationError({ from: 'must be before to' });
    return { fromMs, toMs };
  }

  listScans(nodeId: string, q: { from?: string; to?: string; bots?: 'exclude' | 'include' | 'only'; limit: number; offset: number }) {
    const { fromMs, toMs } = this.scanRange(q);
    const bots = q.bots ?? 'exclude';
    // The per-node order is filled by the fold, like the roll-ups.
    this.catchUp();
    let total: number;
    if (bots === 'exclude' && q.from === undefined && q.to === undefined) {
      // All human scans of the node: the roll-ups already hold the count.
      total = this.repo.totalScans({ kind: 'node', id: nodeId }, 0, Number.MAX_SAFE_INTEGER);
    } else {
      total = this.repo.countScans(nodeId, fromMs, toMs, bots);
    }
    return { rows: this.repo.listScans(nodeId, fromMs, toMs, bots, q.limit, q.offset).map(toApiScan), total };
  }

  /**
   * All of a node's scans in the range, newest first, a page at a time (the CSV export): the
   * caller can free the event loop and wait for its client between pages, and each page is a
   * keyset query, so a node with millions of scans never holds a cursor open across them.
   * Folds first, like listScans; scans folded while the pages are read appear only if older
   * than the page being read.
   */
  *scanPages(nodeId: string, q: { from?: string; to?: string; bots?: 'exclude' | 'include' | 'only' }, pageSize = 1000): Generator<ApiScan[]> {
    const { fromMs, toMs } = this.scanRange(q);
    const bots = q.bots ?? 'exclude';
    this.catchUp();
    let before = { ts: Number.MAX_SAFE_INTEGER, id: Number.MAX_SAFE_INTEGER };
    for (;;) {
      const rows = this.repo.scansBefore(nodeId, fromMs, toMs, bots, before, pageSize);
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
    source: row.source as 'qr' | 'nfc',
    rule_id: row.rule_id,
    outcome: row.outcome,
    bot: row.is_bot === 1,
    visitor: row.visitor_hash,
  };
}

export const SCAN_CSV_HEADER = ['id', 'timestamp', 'device_type', 'os', 'browser', 'country', 'source', 'rule_id', 'outcome', 'bot', 'visitor'] as const;
