// The scans chart and breakdown bars, shared by a node's analytics and the organization's.
import { useId } from 'react';
import type { Interval as IntervalT } from '../../server/schemas/analytics.ts';
import type { NodeAnalyticsT } from '../lib/api.ts';
import { bucketLabel, labelledBuckets, niceTicks, rangeLabel } from '../lib/chart.ts';
import { formatDate, formatNumber } from '../lib/format.ts';

type ScanBucketT = NodeAnalyticsT['series'][number];

const INTERVAL_WORDS = { hour: 'hour', day: 'day', week: 'week' } as const;

/**
 * Scans per bucket as bars on a value axis with round gridlines, dates under the bars and each
 * bar's count above it; the list behind it reads as "date: n scans" to a screen reader.
 */
export function BarChart({ points, interval }: { points: ScanBucketT[]; interval: IntervalT }) {
  const captionId = useId();
  if (points.length === 0) return null;
  const max = Math.max(0, ...points.map((p) => p.scans));
  const ticks = niceTicks(max);
  const top = ticks[ticks.length - 1]!;
  const labelled = labelledBuckets(points.length, 8);
  // On a phone only every other label has room.
  const major = labelledBuckets(points.length, 4);
  return (
    <figure className={`chart${points.length > 14 ? ' chart-dense' : ''}`} aria-labelledby={captionId}>
      <div className="chart-area">
        <div className="chart-y" aria-hidden="true">
          {ticks.map((t) => (
            <span key={t} className="chart-tick" style={{ bottom: `${(t / top) * 100}%` }}>
              {formatNumber(t)}
            </span>
          ))}
        </div>
        <div className="chart-plot">
          {ticks.map((t) => (
            <span key={t} className="chart-grid" style={{ bottom: `${(t / top) * 100}%` }} aria-hidden="true" />
          ))}
          <ol className="chart-bars">
            {points.map((p, i) => (
              <li key={p.start} className="chart-col" title={`${formatDate(p.start)}: ${formatNumber(p.scans)}`}>
                <span className="chart-value" aria-hidden="true" style={{ bottom: `${(p.scans / top) * 100}%` }}>
                  {p.scans > 0 ? formatNumber(p.scans) : ''}
                </span>
                <span className="chart-bar" style={{ height: `${(p.scans / top) * 100}%` }} aria-hidden="true" />
                <span className={`chart-x${major.has(i) ? '' : ' chart-x-minor'}`} aria-hidden="true">
                  {labelled.has(i) ? bucketLabel(p.start, interval) : ''}
                </span>
                <span className="visually-hidden">
                  {bucketLabel(p.start, interval)}: {formatNumber(p.scans)} scans
                </span>
              </li>
            ))}
          </ol>
        </div>
      </div>
      <figcaption id={captionId} className="chart-caption">
        Scans per {INTERVAL_WORDS[interval]} (UTC), {rangeLabel(points[0]!.start, points[points.length - 1]!.start, interval)}
      </figcaption>
    </figure>
  );
}

export function BreakdownList({ label, rows, name }: { label: string; rows: { value: string | null; scans: number }[]; name(value: string | null): string }) {
  const total = rows.reduce((s, r) => s + r.scans, 0) || 1;
  return (
    <ul aria-label={label}>
      {rows.slice(0, 8).map((r) => (
        <li key={r.value ?? '(none)'}>
          <span className="breakdown-key">{name(r.value)}</span>
          <span className="breakdown-bar" aria-hidden="true">
            <span style={{ width: `${(r.scans / total) * 100}%` }} />
          </span>
          <span className="breakdown-count">{formatNumber(r.scans)}</span>
        </li>
      ))}
    </ul>
  );
}

export function BreakdownBars({ title, rows, name }: { title: string; rows: { value: string | null; scans: number }[]; name?: ((value: string | null) => string) | undefined }) {
  if (rows.length === 0) return null;
  return (
    <div className="breakdown">
      <h3>{title}</h3>
      <BreakdownList label={title} rows={rows} name={name ?? ((v) => v ?? 'Unknown')} />
    </div>
  );
}
