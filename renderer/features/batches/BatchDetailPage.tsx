import { useState } from 'react';
import { StatusBadge } from '../../components/Badge.tsx';
import { Button } from '../../components/Button.tsx';
import { Link } from '../../components/Link.tsx';
import { NodeTable } from '../../components/NodeTable.tsx';
import { Card, PageHeader } from '../../components/PageHeader.tsx';
import { Pagination } from '../../components/Pagination.tsx';
import { ProvisionalSerialsNotice } from '../../components/ProvisionalSerialsNotice.tsx';
import { Empty, ErrorState, Loading, Notice } from '../../components/States.tsx';
import { ApiError, api, type BatchT } from '../../lib/api.ts';
import { saveBlob } from '../../lib/download.ts';
import { formatDate, formatNumber, typeLabel } from '../../lib/format.ts';
import { toast } from '../../lib/toast.ts';
import { useInterval, useResource } from '../../lib/useResource.ts';

const PAGE = 50;
const IN_PROGRESS = new Set(['pending', 'generating']);

export function BatchDetailPage({ id }: { id: string }) {
  const batch = useResource(() => api.batches.get(id), [id]);
  const generating = batch.data ? IN_PROGRESS.has(batch.data.status) : false;
  // Live progress: poll GET /v1/batches/{id} while the job runs.
  useInterval(batch.reload, 1500, generating);

  if (batch.error) {
    return (
      <>
        <PageHeader title="Batch" back={<Link to="/batches">← Batches</Link>} />
        <ErrorState error={batch.error} onRetry={batch.reload} title={batch.error instanceof ApiError && batch.error.status === 404 ? 'Batch not found' : 'Could not load the batch'} />
      </>
    );
  }
  if (!batch.data) return <Loading label="Loading batch…" />;
  const b = batch.data;
  return (
    <>
      <PageHeader
        back={<Link to="/batches">← Batches</Link>}
        title={
          <span className="title-row">
            {b.label} <StatusBadge status={b.status} />
          </span>
        }
        description={`${formatNumber(b.quantity)} ${typeLabel(b.function_type)} nodes · prefix ${b.prefix} · created ${formatDate(b.created_at)}`}
        actions={<BatchActions batch={b} onChanged={batch.set} />}
      />
      <Card title="Progress">
        <Progress batch={b} />
      </Card>
      <BatchNodes batch={b} />
    </>
  );
}

function Progress({ batch }: { batch: BatchT }) {
  const pct = batch.quantity > 0 ? Math.round((batch.nodes_generated / batch.quantity) * 100) : 0;
  const written = batch.quantity > 0 ? Math.round((batch.nodes_written / batch.quantity) * 100) : 0;
  return (
    <div className="progress-block" aria-live="polite">
      <div className="progress-label">
        <span>Generated</span>
        <span data-testid="batch-progress">
          {formatNumber(batch.nodes_generated)} / {formatNumber(batch.quantity)}
        </span>
      </div>
      <div className="progress" role="progressbar" aria-label="Nodes generated" aria-valuemin={0} aria-valuemax={batch.quantity} aria-valuenow={batch.nodes_generated}>
        <span style={{ width: `${pct}%` }} />
      </div>
      <div className="progress-label">
        <span>Tags written</span>
        <span>
          {formatNumber(batch.nodes_written)} / {formatNumber(batch.quantity)}
        </span>
      </div>
      <div className="progress progress-secondary" role="progressbar" aria-label="Tags written" aria-valuemin={0} aria-valuemax={batch.quantity} aria-valuenow={batch.nodes_written}>
        <span style={{ width: `${written}%` }} />
      </div>
      <ProvisionalSerialsNotice batch={batch} />
      {batch.status === 'failed' ? <Notice kind="error">Generation failed: {batch.failure_reason ?? 'unknown reason'}</Notice> : null}
      {batch.status === 'pending' ? <Notice kind="info">Waiting to start (for example for slugs from the remote while offline).</Notice> : null}
    </div>
  );
}

function BatchActions({ batch, onChanged }: { batch: BatchT; onChanged(b: BatchT): void }) {
  const [busy, setBusy] = useState<string | null>(null);
  const ready = !IN_PROGRESS.has(batch.status) && batch.status !== 'failed';
  const run = async (name: string, fn: () => Promise<BatchT>, done: string) => {
    setBusy(name);
    try {
      onChanged(await fn());
      toast.success(done);
    } catch (err) {
      toast.fromError(err);
    } finally {
      setBusy(null);
    }
  };
  const download = async (format: 'json' | 'csv') => {
    setBusy(format);
    try {
      saveBlob(await api.batches.manifestFile(batch.id, format), `${batch.prefix}-manifest.${format}`);
    } catch (err) {
      toast.fromError(err);
    } finally {
      setBusy(null);
    }
  };
  return (
    <div className="button-row">
      <Button busy={busy === 'json'} disabled={!ready} onClick={() => download('json')} title={ready ? undefined : 'Available when the batch is ready'}>
        Manifest JSON
      </Button>
      <Button busy={busy === 'csv'} disabled={!ready} onClick={() => download('csv')} title={ready ? undefined : 'Available when the batch is ready'}>
        Manifest CSV
      </Button>
      {ready ? (
        <Link to={`/print?batch=${batch.id}`} className="btn">
          Print labels
        </Link>
      ) : null}
      {ready ? (
        <Link to="/program-tags" className="btn">
          Program tags
        </Link>
      ) : null}
      {batch.status === 'ready' || batch.status === 'writing' ? (
        <Button busy={busy === 'deploy'} onClick={() => run('deploy', () => api.batches.update(batch.id, { status: 'deployed' }), 'Batch deployed: its nodes are active')}>
          Mark deployed
        </Button>
      ) : null}
      {batch.status === 'failed' ? (
        <Button variant="primary" busy={busy === 'retry'} onClick={() => run('retry', () => api.batches.retry(batch.id), 'Generation restarted')}>
          Retry
        </Button>
      ) : null}
    </div>
  );
}

function BatchNodes({ batch }: { batch: BatchT }) {
  const [offset, setOffset] = useState(0);
  const nodes = useResource(() => api.nodes.list({ batch_id: batch.id, limit: PAGE, offset }), [batch.id, offset, batch.nodes_generated, batch.status]);
  return (
    <Card title="Nodes of this batch">
      {nodes.error ? (
        <ErrorState error={nodes.error} onRetry={nodes.reload} />
      ) : !nodes.data ? (
        <Loading label="Loading nodes…" />
      ) : nodes.data.data.length === 0 ? (
        <Empty title={IN_PROGRESS.has(batch.status) ? 'Generating…' : 'No nodes'} />
      ) : (
        <>
          <NodeTable nodes={nodes.data.data} caption="Nodes of this batch" showSerial />
          <Pagination offset={offset} limit={PAGE} total={nodes.data.total} onChange={setOffset} label="Batch node pages" />
        </>
      )}
    </Card>
  );
}
