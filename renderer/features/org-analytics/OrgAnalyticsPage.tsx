import type { Interval } from '../../../server/schemas/analytics.ts';
import { INTERVALS } from '../../../server/schemas/analytics.ts';
import { Field } from '../../components/Field.tsx';
import { Link } from '../../components/Link.tsx';
import { Card, PageHeader } from '../../components/PageHeader.tsx';
import { PeriodSelect } from '../../components/PeriodSelect.tsx';
import { BarChart, BreakdownBars, BreakdownList } from '../../components/ScanCharts.tsx';
import { Empty, ErrorState, Loading } from '../../components/States.tsx';
import { ANALYTICS_RANGES, type AnalyticsRange, INTERVAL_LABELS, intervalsFor, isAnalyticsRange, rangeQuery } from '../../lib/analyticsRange.ts';
import { api, type OrgAnalyticsT } from '../../lib/api.ts';
import { countryName } from '../../lib/countries.ts';
import { formatNumber, sourceLabel } from '../../lib/format.ts';
import { setSearchParams, useSearchParams } from '../../lib/router.ts';
import { useResource } from '../../lib/useResource.ts';
import { percentOf, sourceRows } from './summary.ts';
import { TopNodesTable } from './TopNodesTable.tsx';

const TOP_NODES = 10;

const BREAKDOWNS = [
  { key: 'device_type', title: 'Devices' },
  { key: 'os', title: 'Operating systems' },
  { key: 'browser', title: 'Browsers' },
  { key: 'country', title: 'Countries', name: (v: string | null) => (v === null ? 'Unknown' : countryName(v)) },
] as const satisfies readonly { key: keyof OrgAnalyticsT['breakdowns']; title: string; name?: (v: string | null) => string }[];

/** How every node of the organization is scanned: totals, sources, the time series and the top nodes. */
export function OrgAnalyticsPage() {
  // The period lives in the URL, so a reload or the back button keeps it.
  const params = useSearchParams();
  const rangeParam = params.get('range');
  const range: AnalyticsRange = isAnalyticsRange(rangeParam) ? rangeParam : '30d';
  const byParam = params.get('by');
  const requested = (INTERVALS as readonly string[]).includes(byParam ?? '') ? (byParam as Interval) : null;
  const query = rangeQuery(range, new Date(), requested);
  const analytics = useResource(() => api.analytics({ ...query, top: TOP_NODES }), [range, query.interval]);

  return (
    <>
      <PageHeader title="Analytics" description="How all your nodes are scanned. Human scans only: bots and link previewers are not counted." />
      <div className="filters">
        <PeriodSelect value={range} onChange={(r) => setSearchParams({ range: r, by: requested })} />
        <Field label="Group by">
          {(c) => (
            <select {...c} className="input" value={query.interval} disabled={intervalsFor(range).length < 2} onChange={(e) => setSearchParams({ range, by: e.target.value })}>
              {intervalsFor(range).map((i) => (
                <option key={i} value={i}>
                  {INTERVAL_LABELS[i]}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      {analytics.error ? (
        <ErrorState error={analytics.error} onRetry={analytics.reload} title="Could not load analytics" />
      ) : !analytics.data ? (
        <Loading label="Loading analytics…" />
      ) : analytics.data.totals.scans === 0 ? (
        <section className="card">
          <Empty
            title={`No scans in the ${ANALYTICS_RANGES[range].label.toLowerCase()}`}
            action={
              <span>
                <Link to="/print">Print labels</Link> · <Link to="/program-tags">Program tags</Link> · <Link to="/nodes">Nodes</Link>
              </span>
            }
          >
            Scans appear here once someone scans a node’s QR code or taps its NFC tag. Print a label or write a tag for a node, then scan it with a phone to check.
          </Empty>
        </section>
      ) : (
        <OrgAnalyticsView data={analytics.data} />
      )}
    </>
  );
}

function OrgAnalyticsView({ data }: { data: OrgAnalyticsT }) {
  const { totals } = data;
  const sources = sourceRows(data.breakdowns.source);
  const verified = sources.find((s) => s.value === 'nfc_verified')?.scans ?? 0;
  return (
    <>
      <dl className="stat-tiles">
        <div className="stat-tile">
          <dt>Scans</dt>
          <dd>{formatNumber(totals.scans)}</dd>
        </div>
        <div className="stat-tile">
          <dt>Unique visitors</dt>
          <dd>{formatNumber(totals.unique_visitors)}</dd>
        </div>
        <div className="stat-tile">
          <dt>Nodes scanned</dt>
          <dd>{formatNumber(totals.nodes_scanned)}</dd>
        </div>
        <div className="stat-tile">
          <dt>Verified NFC taps</dt>
          <dd>
            {formatNumber(verified)} <span className="muted">{percentOf(verified, totals.scans)}</span>
          </dd>
        </div>
      </dl>
      <Card title="Scans over time">
        <BarChart points={data.series} interval={data.interval} />
      </Card>
      <div className="org-analytics-grid">
        <Card title="Top nodes">
          <TopNodesTable nodes={data.top_nodes} total={totals.scans} />
        </Card>
        <Card title="Sources">
          <div className="breakdown breakdown-wide">
            <BreakdownList label="Scans by source" rows={sources} name={sourceLabel} />
          </div>
          <p className="muted breakdown-note">A verified tap carried a valid tap proof from a registered NFC tag; anyone can copy an unverified tag link.</p>
        </Card>
      </div>
      <Card title="Audience">
        <div className="breakdowns breakdowns-flush">
          {BREAKDOWNS.map((b) => (
            <BreakdownBars key={b.key} title={b.title} rows={data.breakdowns[b.key]} name={'name' in b ? b.name : undefined} />
          ))}
        </div>
      </Card>
    </>
  );
}
