// The analytics periods the console offers (a node's panel and the organization's screen) and the
// query each one sends: `from`/`to` and the bucket size the chart is drawn in.
import type { Interval } from '../../server/schemas/analytics.ts';

export const ANALYTICS_RANGES = {
  '24h': { label: 'Last 24 hours', days: 1, intervals: ['hour'] },
  '7d': { label: 'Last 7 days', days: 7, intervals: ['day', 'hour'] },
  '30d': { label: 'Last 30 days', days: 30, intervals: ['day', 'week'] },
  '90d': { label: 'Last 90 days', days: 90, intervals: ['week', 'day'] },
} as const satisfies Record<string, { label: string; days: number; intervals: readonly Interval[] }>;

export type AnalyticsRange = keyof typeof ANALYTICS_RANGES;

export const INTERVAL_LABELS: Record<Interval, string> = { hour: 'By hour', day: 'By day', week: 'By week' };

export function isAnalyticsRange(value: string | null): value is AnalyticsRange {
  return value !== null && Object.hasOwn(ANALYTICS_RANGES, value);
}

/** The bucket sizes a range may be drawn in; the first is its default (a few dozen bars at most). */
export function intervalsFor(range: AnalyticsRange): readonly Interval[] {
  return ANALYTICS_RANGES[range].intervals;
}

/**
 * The query for `range` ending at `now`, in `interval` if the range allows it (else its default):
 * a chosen "by hour" does not survive a switch to 90 days.
 */
export function rangeQuery(range: AnalyticsRange, now: Date, interval?: Interval | null): { from: string; to: string; interval: Interval } {
  const { days } = ANALYTICS_RANGES[range];
  const allowed = intervalsFor(range);
  const chosen = interval && allowed.includes(interval) ? interval : allowed[0]!;
  return { from: new Date(now.getTime() - days * 86_400_000).toISOString(), to: now.toISOString(), interval: chosen };
}
