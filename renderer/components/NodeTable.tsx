import type { NodeT } from '../lib/api.ts';
import { formatDate, formatNumber, typeLabel } from '../lib/format.ts';
import { StatusBadge } from './Badge.tsx';
import { Link } from './Link.tsx';
import { summarizePayload } from './payload/fields.ts';

/** The node list used by the Nodes screen and a batch's page. */
export function NodeTable({ nodes, caption, showSerial }: { nodes: NodeT[]; caption: string; showSerial?: boolean }) {
  return (
    <div className="table-wrap">
      <table className="table">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {showSerial ? <th scope="col">Serial</th> : null}
            <th scope="col">Label</th>
            <th scope="col">Slug</th>
            <th scope="col">Type</th>
            <th scope="col">Status</th>
            <th scope="col" className="num">
              Scans
            </th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {nodes.map((n) => (
            <tr key={n.id}>
              {showSerial ? (
                <td className="mono" data-label="Serial">
                  {n.serial ?? '—'}
                </td>
              ) : null}
              <td data-label="Label">
                <Link to={`/nodes/${n.slug}`} className="row-link">
                  {n.label}
                </Link>
                <div className="cell-sub">{Object.keys(n.payload).length === 0 ? 'Not configured' : summarizePayload(n.function_type, n.payload)}</div>
              </td>
              <td className="mono" data-label="Slug">
                {n.slug}
              </td>
              <td data-label="Type">{typeLabel(n.function_type)}</td>
              <td data-label="Status">
                <StatusBadge status={n.status} />
              </td>
              <td className="num" data-label="Scans">
                {formatNumber(n.scan_count)}
              </td>
              <td className="nowrap" data-label="Created">
                {formatDate(n.created_at)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
