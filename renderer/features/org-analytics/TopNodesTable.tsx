import { Link } from '../../components/Link.tsx';
import type { OrgAnalyticsT } from '../../lib/api.ts';
import { formatNumber } from '../../lib/format.ts';
import { percentOf } from './summary.ts';

/** The most scanned nodes of the period, each linking to its own Scans & analytics tab. */
export function TopNodesTable({ nodes, total }: { nodes: OrgAnalyticsT['top_nodes']; total: number }) {
  return (
    <div className="table-wrap">
      <table className="table" data-testid="top-nodes">
        <caption className="visually-hidden">Top nodes by scans</caption>
        <thead>
          <tr>
            <th scope="col" className="num">
              #
            </th>
            <th scope="col">Node</th>
            <th scope="col" className="num">
              Scans
            </th>
            <th scope="col" className="num">
              Of all scans
            </th>
          </tr>
        </thead>
        <tbody>
          {nodes.map((n, i) => (
            <tr key={n.id}>
              <td className="num" data-label="Rank">
                {i + 1}
              </td>
              <td data-label="Node">
                <Link to={`/nodes/${encodeURIComponent(n.slug)}?tab=scans`} className="row-link">
                  {n.label}
                </Link>
                <div className="cell-sub mono">{n.slug}</div>
              </td>
              <td className="num" data-label="Scans">
                {formatNumber(n.scans)}
              </td>
              <td className="num" data-label="Of all scans">
                {percentOf(n.scans, total)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
