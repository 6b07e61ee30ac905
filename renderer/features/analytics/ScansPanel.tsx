import { useState } from 'react';
import { Button } from '../../components/Button.tsx';
import { ConfirmAction } from '../../components/Dialog.tsx';
import { Card } from '../../components/PageHeader.tsx';
import { Pagination } from '../../components/Pagination.tsx';
import { PeriodSelect } from '../../components/PeriodSelect.tsx';
import { BarChart, BreakdownBars, BreakdownList } from '../../components/ScanCharts.tsx';
import { Empty, ErrorState, Loading } from '../../components/States.tsx';
import { summarizePayload } from '../../components/payload/fields.ts';
import { ApiError, type NodeAnalyticsT, type NodeT, type RuleT, api } from '../../lib/api.ts';
import { type AnalyticsRange, rangeQuery } from '../../lib/analyticsRange.ts';
import { saveBlob } from '../../lib/download.ts';
import { formatDate, formatNumber, sourceLabel, typeLabel } from '../../lib/format.ts';
import { RULE_TYPE_LABELS, describeConditions } from '../../lib/ruleText.ts';
import { toast } from '../../lib/toast.ts';
import { useResource } from '../../lib/useResource.ts';

const PAGE = 25;

function Unavailable({ what }: { what: string }) {
  return <Empty title={`${what} are not available on this server`}>This Waymark server does not record scans yet (the scans feature is not installed).</Empty>;
}

/** Analytics charts, split-test variants and the scan log of one node. */
export function ScansPanel({ node, onNodeChanged }: { node: NodeT; onNodeChanged?: () => void }) {
  const slug = node.slug;
  const [range, setRange] = useState<AnalyticsRange>('7d');
  const [offset, setOffset] = useState(0);
  const analytics = useResource(() => api.nodes.analytics(slug, rangeQuery(range, new Date())), [slug, range]);
  const scans = useResource(() => api.nodes.scans(slug, PAGE, offset), [slug, offset]);
  const missing = (e: unknown) => e instanceof ApiError && e.status === 404;

  return (
    <div className="stack">
      <Card
        title="Analytics"
        actions={
          <PeriodSelect value={range} onChange={setRange} className="field-inline" />
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
          <AnalyticsView data={analytics.data} slug={slug} />
        )}
      </Card>
      {analytics.data?.split_test ? (
        <SplitTestView
          node={node}
          split={analytics.data.split_test}
          onPromoted={() => {
            analytics.reload();
            onNodeChanged?.();
          }}
        />
      ) : null}
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
                      <td data-label="Source">{sourceLabel(s.source)}</td>
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

function AnalyticsView({ data, slug }: { data: NodeAnalyticsT; slug: string }) {
  const rules = useResource(() => api.rules.list(slug), [slug]);
  if (data.totals.scans === 0) return <Empty title="No scans in this period">Bots and link previewers are not counted.</Empty>;
  const ruleName = (id: string | null): string => {
    if (id === null) return 'The node’s own content';
    const index = rules.data?.data.findIndex((r) => r.id === id) ?? -1;
    const rule = index >= 0 ? rules.data!.data[index]! : undefined;
    if (!rule) return rules.data ? 'A rule since deleted' : 'Rule';
    return `Rule ${index + 1}: ${RULE_TYPE_LABELS[rule.rule_type]} (${describeConditions(rule.rule_type, rule.conditions)}) → ${typeLabel(rule.function_type)}`;
  };
  return (
    <div className="analytics">
      <p className="big-number">
        {formatNumber(data.totals.scans)} <span className="muted">scans · {formatNumber(data.totals.unique_visitors)} unique visitors (bots excluded)</span>
      </p>
      <BarChart points={data.series} interval={data.interval} />
      <div className="breakdown breakdown-wide">
        <h3>By matched rule</h3>
        <BreakdownList label="Scans by matched rule" rows={data.breakdowns.rule} name={ruleName} />
      </div>
      <div className="breakdowns">
        {Object.entries(BREAKDOWN_TITLES).map(([key, title]) => (
          <BreakdownBars key={key} title={title} rows={data.breakdowns[key as keyof NodeAnalyticsT['breakdowns']]} name={key === 'source' ? sourceLabel : undefined} />
        ))}
      </div>
    </div>
  );
}

type SplitTestT = NonNullable<NodeAnalyticsT['split_test']>;
type VariantT = SplitTestT['variants'][number];

/**
 * A node's split test: what each variant (traffic_split rule, and the node's own payload for the
 * rest) got, and a Promote button that makes a variant the node's payload and ends the test.
 */
function SplitTestView({ node, split, onPromoted }: { node: NodeT; split: SplitTestT; onPromoted(): void }) {
  const rules = useResource(() => api.rules.list(node.slug), [node.slug, JSON.stringify(split.variants.map((v) => v.rule_id))]);
  const [promoting, setPromoting] = useState<{ variant: VariantT; label: string } | null>(null);
  const byId = new Map<string, RuleT>((rules.data?.data ?? []).map((r) => [r.id, r]));
  const totalScans = split.variants.reduce((s, v) => s + v.scans, 0);
  const serves = (v: VariantT): string => {
    const content = v.rule_id === null ? node : byId.get(v.rule_id);
    if (!content) return typeLabel(v.function_type);
    const summary = summarizePayload(content.function_type, content.payload);
    return summary ? `${typeLabel(content.function_type)}: ${summary}` : typeLabel(content.function_type);
  };
  return (
    <Card title="Split test">
      <p className="muted">
        Since {formatDate(split.since)}, human scans only. Promoting a variant makes its content the node’s payload and deletes the split rules.
      </p>
      <div className="table-wrap">
        <table className="table" data-testid="split-test">
          <caption className="visually-hidden">Split-test variants</caption>
          <thead>
            <tr>
              <th scope="col">Variant</th>
              <th scope="col">Serves</th>
              <th scope="col">Share</th>
              <th scope="col">Scans</th>
              <th scope="col">Unique visitors</th>
              <th scope="col">Of the scans</th>
              <th scope="col">
                <span className="visually-hidden">Action</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {split.variants.map((v, i) => {
              const label = v.rule_id === null ? 'Node’s own payload' : `Variant ${String.fromCharCode(65 + i)}`;
              return (
                <tr key={v.rule_id ?? 'node'} className={v.enabled ? undefined : 'muted'}>
                  <td data-label="Variant">
                    <strong>{label}</strong>
                    {v.enabled ? '' : ' (off)'}
                  </td>
                  <td data-label="Serves">{serves(v)}</td>
                  <td data-label="Share">{v.weight}%</td>
                  <td data-label="Scans">{formatNumber(v.scans)}</td>
                  <td data-label="Unique visitors">{formatNumber(v.unique_visitors)}</td>
                  <td data-label="Of the scans">{totalScans > 0 ? `${Math.round((v.scans / totalScans) * 100)}%` : '—'}</td>
                  <td data-label="Action">
                    {v.rule_id === null ? (
                      <span className="muted">Delete the split rules to keep it</span>
                    ) : (
                      <Button size="sm" aria-label={`Promote ${label}`} onClick={() => setPromoting({ variant: v, label })}>
                        Promote
                      </Button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <ConfirmAction
        target={promoting}
        title={(p) => `Promote ${p.label}?`}
        message={(p) => `${serves(p.variant)} becomes the node’s payload for every scan, and the node’s split rules are deleted.`}
        confirmLabel="Promote"
        action={(p) => api.rules.promote(node.slug, p.variant.rule_id as string)}
        success={(p) => `${p.label} promoted`}
        onDone={onPromoted}
        onClose={() => setPromoting(null)}
      />
    </Card>
  );
}
