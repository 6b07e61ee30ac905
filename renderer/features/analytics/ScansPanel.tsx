import { useState } from 'react';
import { Button } from '../../components/Button.tsx';
import { Field } from '../../components/Field.tsx';
import { Card } from '../../components/PageHeader.tsx';
import { Pagination } from '../../components/Pagination.tsx';
import { Empty, ErrorState, Loading } from '../../components/States.tsx';
import { ApiError, type NodeAnalyticsT, api } from '../../lib/api.ts';
import { saveBlob } from '../../lib/download.ts';
import { formatDate, formatNumber } from '../../lib/format.ts';
import { toast } from '../../lib/toast.ts';
import { useResource } from '../../lib/useResource.ts';

const PAGE = 25;
const RANGES = { '24h': { days: 1, interval: 'hour' }, '7d': { days: 7, interval: 'day' }, '30d': { days: 30, interval: 'day' }, '90d': { days: 90, interval: 'week' } } as const;
type Range = keyof typeof RANGES;

function Unavailable({ what }: { what: string }) {
  return <Empty title={`${what} are not available on this server`}>This Waymark server does not record scans yet (the scans feature is not installed).</Empty>;
}

/** Analytics charts and the scan log of one node. */
export function ScansPanel({ slug }: { slug: string }) {
  const [range, setRange] = useState<Range>('7d');
  const [offset, setOffset] = useState(0);
  const analytics = useResource(() => {
    const { days, interval } = RANGES[range];
    const to = new Date();
    const from = new Date(to.getTime() - days * 86_400_000);
    return api.nodes.analytics(slug, { from: from.toISOString(), to: to.toISOString(), interval });
  }, [slug, range]);
  const scans = useResource(() => api.nodes.scans(slug, PAGE, offset), [slug, offset]);
  const missing = (e: unknown) => e instanceof ApiError && e.status === 404;

  return (
    <div className="stack">
      <Card
        title="Analytics"
        actions={
          <Field label="Period" className="field-inline">
            {(c) => (
              <select {...c} className="input" value={range} onChange={(e) => setRange(e.target.value as Range)}>
                <option value="24h">Last 24 hours</option>
                <option value="7d">Last 7 days</option>
                <option value="30d">Last 30 days</option>
                <option value="90d">Last 90 days</option>
              </select>
            )}
          </Field>
        }
      >
        {analytics.error ? (
          missing(analytics.error) ? (
            <Unavailable what="Analytics" />
          ) : (
            <ErrorState error={analytics.error} onRetry={analytics.reload} title="Could not load analytics" />
          )
        ) : analytics.data === undefined ? (
          <Loading label="Loading analytics…" />
        ) : (
          <AnalyticsView data={analytics.data} />
        )}
      </Card>
      <Card
        title="Scans"
        actions={
          scans.data && scans.data.total > 0 ? (
            <Button
              size="sm"
              onClick={async () => {
                try {
                  saveBlob(await api.nodes.scansCsv(slug), `waymark-${slug}-scans.csv`);
                } catch (err) {
                  toast.fromError(err);
                }
              }}
            >
              Download CSV
            </Button>
          ) : null
        }
      >
        {scans.error ? (
          missing(scans.error) ? (
            <Unavailable what="Scans" />
          ) : (
            <ErrorState error={scans.error} onRetry={scans.reload} title="Could not load scans" />
          )
        ) : !scans.data ? (
          <Loading label="Loading scans…" />
        ) : scans.data.data.length === 0 ? (
          <Empty title="No scans yet">Scans appear here as soon as someone scans the code or taps the tag.</Empty>
        ) : (
          <>
            <div className="table-wrap">
              <table className="table">
                <caption className="visually-hidden">Scans</caption>
                <thead>
                  <tr>
                    <th scope="col">Time</th>
                    <th scope="col">Source</th>
                    <th scope="col">Device</th>
                    <th scope="col">OS</th>
                    <th scope="col">Browser</th>
                    <th scope="col">Country</th>
                    <th scope="col">Outcome</th>
                    <th scope="col">Bot</th>
                  </tr>
                </thead>
                <tbody>
                  {scans.data.data.map((s) => (
                    <tr key={s.id}>
                      <td className="nowrap" data-label="Time">
                        {formatDate(s.timestamp)}
                      </td>
                      <td data-label="Source">{s.source === 'nfc' ? 'NFC' : 'QR'}</td>
                      <td data-label="Device">{s.device_type}</td>
                      <td data-label="OS">{s.os}</td>
                      <td data-label="Browser">{s.browser ?? '—'}</td>
                      <td data-label="Country">{s.country ?? '—'}</td>
                      <td data-label="Outcome">{s.outcome}</td>
                      <td data-label="Bot">{s.bot ? 'yes' : 'no'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pagination offset={offset} limit={PAGE} total={scans.data.total} onChange={setOffset} label="Scan pages" />
          </>
        )}
      </Card>
    </div>
  );
}

const BREAKDOWN_TITLES: Record<string, string> = { device_type: 'Devices', os: 'Operating systems', browser: 'Browsers', country: 'Countries', source: 'Source' };

function AnalyticsView({ data }: { data: NodeAnalyticsT }) {
  if (data.totals.scans === 0) return <Empty title="No scans in this period">Bots and link previewers are not counted.</Empty>;
  return (
    <div className="analytics">
      <p className="big-number">
        {formatNumber(data.totals.scans)} <span className="muted">scans · {formatNumber(data.totals.unique_visitors)} unique visitors (bots excluded)</span>
      </p>
      <BarChart points={data.series} />
      <div className="breakdowns">
        {Object.entries(BREAKDOWN_TITLES).map(([key, title]) => (
          <BreakdownBars key={key} title={title} rows={data.breakdowns[key as keyof NodeAnalyticsT['breakdowns']]} />
        ))}
      </div>
    </div>
  );
}

function BarChart({ points }: { points: NodeAnalyticsT['series'] }) {
  if (points.length === 0) return null;
  const max = Math.max(1, ...points.map((p) => p.scans));
  const w = 640;
  const h = 160;
  const bw = w / points.length;
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${w} ${h + 20}`} role="img" aria-label={`Scans over time, highest ${max} per interval`} preserveAspectRatio="none">
        {points.map((p, i) => {
          const bh = (p.scans / max) * h;
          return (
            <rect key={p.start} x={i * bw + 1} y={h - bh} width={Math.max(1, bw - 2)} height={bh} rx={2} className="chart-bar">
              <title>{`${formatDate(p.start)}: ${p.scans}`}</title>
            </rect>
          );
        })}
        <line x1={0} y1={h} x2={w} y2={h} className="chart-axis" />
      </svg>
      <figcaption className="chart-caption">
        <span>{formatDate(points[0]!.start)}</span>
        <span>{formatDate(points[points.length - 1]!.start)}</span>
      </figcaption>
    </figure>
  );
}

function BreakdownBars({ title, rows }: { title: string; rows: { value: string | null; scans: number }[] }) {
  if (rows.length === 0) return null;
  const total = rows.reduce((s, r) => s + r.scans, 0) || 1;
  return (
    <div className="breakdown">
      <h3>{title}</h3>
      <ul>
        {rows.slice(0, 8).map((r) => (
          <li key={r.value ?? '(unknown)'}>
            <span className="breakdown-key">{r.value ?? 'Unknown'}</span>
            <span className="breakdown-bar" aria-hidden="true">
              <span style={{ width: `${(r.scans / total) * 100}%` }} />
            </span>
            <span className="breakdown-count">{formatNumber(r.scans)}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
