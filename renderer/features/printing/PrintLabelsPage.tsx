import { useEffect, useMemo, useState } from 'react';
import { CAPTIONS, DEFAULT_LAYOUT_ID } from '../../../server/schemas/printing.ts';
import { Button } from '../../components/Button.tsx';
import { Select } from '../../components/Select.tsx';
import { Field } from '../../components/Field.tsx';
import { Card, PageHeader } from '../../components/PageHeader.tsx';
import { Empty, ErrorState, Loading, Spinner } from '../../components/States.tsx';
import { ApiError, type PrintQuery, api } from '../../lib/api.ts';
import { desktopPrint, saveBlob } from '../../lib/download.ts';
import { humanize } from '../../lib/format.ts';
import { setSearchParams, useSearchParams } from '../../lib/router.ts';
import { toast } from '../../lib/toast.ts';
import { useResource } from '../../lib/useResource.ts';

/** Label sheets for a batch: layout picker, live SVG preview of each page, PDF download. */
export function PrintLabelsPage() {
  const params = useSearchParams();
  const batches = useResource(() => api.batches.list({ limit: 100 }), []);
  const layouts = useResource(() => api.printing.layouts(), []);
  const printable = (batches.data?.data ?? []).filter((b) => ['ready', 'writing', 'deployed'].includes(b.status));
  const batchId = params.get('batch') ?? printable[0]?.id ?? '';
  const [layout, setLayout] = useState(DEFAULT_LAYOUT_ID);
  const [caption, setCaption] = useState<PrintQuery['caption']>('serial');
  const [cutMarks, setCutMarks] = useState(false);
  const [start, setStart] = useState('0');
  const [page, setPage] = useState(1);
  const [busy, setBusy] = useState(false);
  const query: PrintQuery = { layout, caption, cut_marks: cutMarks, start: Math.max(0, Number(start) || 0) };
  const preview = useResource(
    () => (batchId ? api.printing.preview(batchId, { ...query, page }) : Promise.resolve(null)),
    [batchId, layout, caption, cutMarks, query.start, page],
  );
  const src = useMemo(() => (preview.data ? URL.createObjectURL(new Blob([preview.data.svg], { type: 'image/svg+xml' })) : null), [preview.data]);
  useEffect(
    () => () => {
      if (src) URL.revokeObjectURL(src);
    },
    [src],
  );

  if (layouts.error instanceof ApiError && layouts.error.isMissingEndpoint) {
    return (
      <>
        <PageHeader title="Print labels" />
        <Empty title="Printing is not available on this server" />
      </>
    );
  }
  const pages = preview.data?.pages ?? 1;
  const current = layouts.data?.data.find((l) => l.id === layout);
  return (
    <>
      <PageHeader title="Print labels" description="Label sheets with vector QR codes and the serial under each, as a PDF to print at 100% scale." />
      {batches.error ? <ErrorState error={batches.error} onRetry={batches.reload} /> : null}
      {!batches.data || !layouts.data ? (
        <Loading />
      ) : printable.length === 0 ? (
        <Empty title="No batch is ready to print">A batch can be printed once its nodes are generated.</Empty>
      ) : (
        <div className="detail-grid">
          <Card title="Preview">
            <div className="print-preview" aria-busy={preview.loading}>
              {preview.error ? <ErrorState error={preview.error} onRetry={preview.reload} /> : src ? <img src={src} alt={`Page ${page} of ${pages} of the label sheets`} /> : <Spinner />}
            </div>
            <div className="pagination">
              <span className="pagination-info">
                Page {page} of {pages}
              </span>
              <div className="pagination-buttons">
                <Button size="sm" disabled={page <= 1} onClick={() => setPage(page - 1)}>
                  Previous page
                </Button>
                <Button size="sm" disabled={page >= pages} onClick={() => setPage(page + 1)}>
                  Next page
                </Button>
              </div>
            </div>
          </Card>
          <Card title="Options">
            <Field label="Batch">
              {(c) => (
                <select
                  {...c}
                  className="input"
                  value={batchId}
                  onChange={(e) => {
                    setPage(1);
                    setSearchParams({ batch: e.target.value });
                  }}
                >
                  {printable.map((b) => (
                    <option key={b.id} value={b.id}>
                      {b.label} ({b.prefix}, {b.quantity})
                    </option>
                  ))}
                </select>
              )}
            </Field>
            <Field label="Layout" hint={current ? `${current.columns} × ${current.rows} labels of ${current.label.width} × ${current.label.height} mm per page` : undefined}>
              {(c) => (
                <Select
                  control={c}
                  value={layout}
                  options={layouts.data!.data.map((l) => ({ value: l.id, label: l.name }))}
                  onChange={(id) => {
                    setLayout(id);
                    setPage(1);
                  }}
                />
              )}
            </Field>
            <Field label="Caption">
              {(c) => <Select control={c} value={caption} options={CAPTIONS.map((cap) => ({ value: cap, label: humanize(cap) }))} onChange={setCaption} />}
            </Field>
            <Field label="Labels already used on the first sheet" hint="Start further down a partly used sheet.">
              {(c) => <input {...c} className="input input-narrow" type="number" min={0} value={start} onChange={(e) => setStart(e.target.value)} />}
            </Field>
            <label className="checkbox">
              <input type="checkbox" checked={cutMarks} onChange={(e) => setCutMarks(e.target.checked)} />
              Cut marks
            </label>
            <div className="form-actions">
              <Button
                variant="primary"
                busy={busy}
                onClick={async () => {
                  setBusy(true);
                  try {
                    const b = printable.find((x) => x.id === batchId);
                    saveBlob(await api.printing.pdf(batchId, query), `${b?.prefix ?? 'labels'}-${layout}.pdf`);
                  } catch (err) {
                    toast.fromError(err);
                  } finally {
                    setBusy(false);
                  }
                }}
              >
                Download PDF
              </Button>
              {desktopPrint && (
                <Button
                busy={busy}
                onClick={async () => {
                  setBusy(true);
                  try {
                    const b = printable.find((x) => x.id === batchId);
                    await desktopPrint!(await api.printing.pdf(batchId, query), `${b?.prefix ?? 'labels'}-${layout}.pdf`);
                  } catch (err) {
                    toast.fromError(err);
                  } finally {
                    setBusy(false);
                  }
                }}
              >
                Print…
              </Button>
              )}
            </div>
          </Card>
        </div>
      )}
    </>
  );
}
