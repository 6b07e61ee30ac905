import { useEffect, useState } from 'react';
import { FUNCTION_TYPES, NODE_STATUSES, type FunctionType, type NodeStatus } from '../../../server/schemas/common.ts';
import { Button } from '../../components/Button.tsx';
import { Field } from '../../components/Field.tsx';
import { NodeTable } from '../../components/NodeTable.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { Pagination } from '../../components/Pagination.tsx';
import { Empty, ErrorState, Loading } from '../../components/States.tsx';
import { api } from '../../lib/api.ts';
import { saveBlob } from '../../lib/download.ts';
import { toast } from '../../lib/toast.ts';
import { humanize, typeLabel } from '../../lib/format.ts';
import { navigate, setSearchParams, useSearchParams } from '../../lib/router.ts';
import { useResource } from '../../lib/useResource.ts';

const PAGE_SIZE = 25;

function oneOf<T extends string>(values: readonly T[], v: string | null): T | undefined {
  return v !== null && (values as readonly string[]).includes(v) ? (v as T) : undefined;
}

/**
 * Nodes, filtered and paged by the server (limit/offset): one page of 25 is loaded at a time, so
 * the screen stays fast whatever the number of nodes.
 */
export function NodesPage() {
  const params = useSearchParams();
  const status = oneOf<NodeStatus>(NODE_STATUSES, params.get('status'));
  const type = oneOf<FunctionType>(FUNCTION_TYPES, params.get('type'));
  const batch = params.get('batch') ?? undefined;
  const q = params.get('q') ?? '';
  const offset = Math.max(0, Number(params.get('offset')) || 0);
  const [search, setSearch] = useState(q);

  const filters = { status, type, batch, q: q || undefined };
  const update = (next: Partial<typeof filters> & { offset?: number }) => setSearchParams({ ...filters, offset: 0, ...next });

  useEffect(() => {
    if (search === q) return;
    const t = window.setTimeout(() => update({ q: search.trim() || undefined }), 300);
    return () => window.clearTimeout(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [search]);

  const nodes = useResource(
    (signal) => api.nodes.list({ status, function_type: type, batch_id: batch, q: q || undefined, limit: PAGE_SIZE, offset }, signal),
    [status, type, batch, q, offset],
  );
  const batches = useResource(() => api.batches.list({ limit: 100 }), []);
  const filtered = Boolean(status || type || batch || q);
  const [exporting, setExporting] = useState<'csv' | 'json' | null>(null);

  /** Every node of the organization (not just this page or filter), as the import reads it back. */
  const exportNodes = async (format: 'csv' | 'json') => {
    setExporting(format);
    try {
      saveBlob(await api.nodes.exportFile(format), `nodes.${format}`);
    } catch (err) {
      toast.fromError(err);
    } finally {
      setExporting(null);
    }
  };

  return (
    <>
      <PageHeader
        title="Nodes"
        description="Every QR code and NFC tag, with its permanent scan URL."
        actions={
          <>
            <Button onClick={() => void exportNodes('csv')} busy={exporting === 'csv'}>
              Export CSV
            </Button>
            <Button onClick={() => void exportNodes('json')} busy={exporting === 'json'}>
              Export JSON
            </Button>
            <Button onClick={() => navigate('/nodes/import')}>Import</Button>
            <Button variant="primary" onClick={() => navigate('/nodes/new')}>
              New node
            </Button>
          </>
        }
      />
      <form className="filters" role="search" aria-label="Filter nodes" onSubmit={(e) => e.preventDefault()}>
        <Field label="Search" className="filter-search">
          {(c) => <input {...c} className="input" type="search" placeholder="Label, slug or serial" value={search} onChange={(e) => setSearch(e.target.value)} />}
        </Field>
        <Field label="Status">
          {(c) => (
            <select {...c} className="input" value={status ?? ''} onChange={(e) => update({ status: (e.target.value || undefined) as NodeStatus | undefined })}>
              <option value="">All statuses</option>
              {NODE_STATUSES.map((s) => (
                <option key={s} value={s}>
                  {humanize(s)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Type">
          {(c) => (
            <select {...c} className="input" value={type ?? ''} onChange={(e) => update({ type: (e.target.value || undefined) as FunctionType | undefined })}>
              <option value="">All types</option>
              {FUNCTION_TYPES.map((t) => (
                <option key={t} value={t}>
                  {typeLabel(t)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Batch">
          {(c) => (
            <select {...c} className="input" value={batch ?? ''} onChange={(e) => update({ batch: e.target.value || undefined })}>
              <option value="">All batches</option>
              {batch && !batches.data?.data.some((b) => b.id === batch) ? <option value={batch}>{batch}</option> : null}
              {(batches.data?.data ?? []).map((b) => (
                <option key={b.id} value={b.id}>
                  {b.label} ({b.prefix})
                </option>
              ))}
            </select>
          )}
        </Field>
        {filtered ? (
          <Button
            variant="ghost"
            className="filters-clear"
            onClick={() => {
              setSearch('');
              setSearchParams({});
            }}
          >
            Clear filters
          </Button>
        ) : null}
      </form>
      <section className="card" aria-busy={nodes.loading}>
        {nodes.error ? (
          <ErrorState error={nodes.error} onRetry={nodes.reload} title="Could not load nodes" />
        ) : !nodes.data ? (
          <Loading label="Loading nodes…" />
        ) : nodes.data.data.length === 0 ? (
          filtered ? (
            <Empty title="No nodes match these filters">Try another search or clear the filters.</Empty>
          ) : (
            <Empty title="No nodes yet" action={<Button variant="primary" onClick={() => navigate('/nodes/new')}>Create your first node</Button>}>
              A node is one QR code or NFC tag. Create one here, or many at once with a batch.
            </Empty>
          )
        ) : (
          <>
            <NodeTable nodes={nodes.data.data} caption="Nodes" showSerial={Boolean(batch)} />
            <Pagination offset={offset} limit={PAGE_SIZE} total={nodes.data.total} onChange={(o) => update({ offset: o })} label="Nodes pages" />
          </>
        )}
      </section>
    </>
  );
}
