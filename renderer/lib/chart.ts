/** Axis arithmetic for the scans chart, kept free of browser APIs for unit tests. */

/** Round gridline values from 0 to at least `max`: steps of 1, 2 or 5 × 10ⁿ, about `count` of them. */
export function niceTicks(max: number, count = 4): number[] {
  if (max <= 0) return [0, 1];
  const rough = max / count;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = Math.max(1, [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? 10 * power);
  const ticks: number[] = [];
  for (let v = 0; v < max + step; v += step) {
    ticks.push(v);
    if (v >= max) break;
  }
  return ticks;
}

/** Which of `count` buckets get a label under the axis: every k-th, at most `most` of them. */
export function labelledBuckets(count: number, most: number): Set<number> {
  const every = Math.max(1, Math.ceil(count / most));
  const out = new Set<number>();
  for (let i = 0; i < count; i += every) out.add(i);
  return out;
}

const hour = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', timeZone: 'UTC' });
const day = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });

/** A bucket's start under the axis (buckets are UTC): 14:00 for hours, 24 Nov for days and weeks. */
export function bucketLabel(start: string, interval: 'hour' | 'day' | 'week'): string {
  const d = new Date(start);
  return interval === 'hour' ? hour.format(d) : day.format(d);
}

const dayWithYear = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
const dayAndHour = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', timeZone: 'UTC' });

/** The chart's span, first bucket to last: 18 Nov 2026 – 25 Nov 2026, or 24 Nov, 14:00 – 25 Nov, 13:00. */
export function rangeLabel(first: string, last: string, interval: 'hour' | 'day' | 'week'): string {
  const f = interval === 'hour' ? dayAndHour : dayWithYear;
  return `${f.format(new Date(first))} – ${f.format(new Date(last))}`;
}
