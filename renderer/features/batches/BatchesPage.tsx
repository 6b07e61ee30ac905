import { useRef, useState } from 'react';
import { BATCH_STATUSES, type BatchStatus } from '../../../server/schemas/common.ts';
import { StatusBadge } from '../../components/Badge.tsx';
import { Button } from '../../components/Button.tsx';
import { Field } from '../../components/Field.tsx';
import { Link } from '../../components/Link.tsx';
import { Card, PageHeader } from '../../components/PageHeader.tsx';
import { Pagination } from '../../components/Pagination.tsx';
import { Empty, ErrorState, Loading } from '../../components/States.tsx';
import { api } from '../../lib/api.ts';
import { formatDate, humanize, typeLabel } from '../../lib/format.ts';
import { navigate } from '../../lib/router.ts';
import { toast } from '../../lib/toast.ts';
import { useInterval, useResource } from '../../lib/useResource.ts';
import { CreateBatchForm } from './CreateBatchForm.tsx';

const PAGE = 25;

export function BatchesPage() {
  const [status, setStatus] = useState<BatchStatus | ''>('');
  const [offset, setOffset] = useState(0);
  const [creating, setCreating] = useState(false);
  // Closing the inline form gives the focus back to the button that opened it.
  const refocusNew = useRef(false);
  const batches = useResource(() => api.batches.list({ status: status || undefined, limit: PAGE, offset }), [status, offset]);
  const busy = (batches.data?.data ?? []).some((b) => b.status === 'generating' || b.status === 'pending');
  useInterval(batches.reload, 3000, busy);

  return (
    <>
      <PageHeader
        title="Batches"
        description="Create up to 500 numbered nodes at once, then print or program their tags."
        actions={
          creating ? null : (
            <Button
              variant="primary"
              onClick={() => setCreating(true)}
              ref={(el) => {
                if (el && refocusNew.current) el.focus();
                refocusNew.current = false;
              }}
            >
              New batch
            </Button>
          )
        }
      />
      {creating ? (
        <Card title="New batch">
          <CreateBatchForm
            onCancel={() => {
              refocusNew.current = true;
              setCreating(false);
            }}
            onCreated={(b) => {
              toast.success(`Batch ${b.label} created: generating ${b.quantity} nodes`);
              navigate(`/batches/${b.id}`);
            }}
          />
        </Card>
      ) : null}
      <div className="filters">
        <Field label="Status">
          {(c) => (
            <select
              {...c}
              className="input"
              value={status}
              onChange={(e) => {
                setStatus(e.target.value as BatchStatus | '');
                setOffset(0);
              }}
            >
              <option value="">All statuses</option>
              {BATCH_STATUSES.map((s) => (
                <option key={s} value={s}>
                  {humanize(s)}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <section className="card">
        {batches.error ? (
          <ErrorState error={batches.error} onRetry={batches.reload} title="Could not load batches" />
        ) : !batches.data ? (
          <Loading label="Loading batches…" />
        ) : batches.data.data.length === 0 ? (
          <Empty title={status ? 'No batches with this status' : 'No batches yet'}>A batch creates many nodes with serial numbers like CAFE-001.</Empty>
        ) : (
          <>
            <div className="table-wrap">
              <table className="table">
                <caption className="visually-hidden">Batches</caption>
                <thead>
                  <tr>
                    <th scope="col">Label</th>
                    <th scope="col">Prefix</th>
                    <th scope="col">Type</th>
                    <th scope="col" className="num">
                      Nodes
                    </th>
                    <th scope="col">Status</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {batches.data.data.map((b) => (
                    <tr key={b.id}>
                      <td data-label="Label">
                        <Link to={`/batches/${b.id}`} className="row-link">
                          {b.label}
                        </Link>
                      </td>
                      <td className="mono" data-label="Prefix">
                        {b.prefix}
                      </td>
                      <td data-label="Type">{typeLabel(b.function_type)}</td>
                      <td className="num" data-label="Nodes">
                        {b.nodes_generated < b.quantity ? `${b.nodes_generated} / ${b.quantity}` : b.quantity}
                      </td>
                      <td data-label="Status">
                        <StatusBadge status={b.status} />
                      </td>
                      <td className="nowrap" data-label="Created">
                        {formatDate(b.created_at)}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pagination offset={offset} limit={PAGE} total={batches.data.total} onChange={setOffset} label="Batch pages" />
          </>
        )}
      </section>
    </>
  );
}
