import { Field } from '../../components/Field.tsx';
import { LabelPrinter } from '../../components/LabelPrinter.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { ProvisionalSerialsNotice } from '../../components/ProvisionalSerialsNotice.tsx';
import { Empty, ErrorState, Loading } from '../../components/States.tsx';
import { api } from '../../lib/api.ts';
import { printingApi } from '../../lib/printing.ts';
import { setSearchParams, useSearchParams } from '../../lib/router.ts';
import { useResource } from '../../lib/useResource.ts';

/** Label sheets for a batch: the batch picker above the shared print options, preview and PDF. */
export function PrintLabelsPage() {
  const params = useSearchParams();
  const batches = useResource(() => api.batches.list({ limit: 100 }), []);
  const printable = (batches.data?.data ?? []).filter((b) => ['ready', 'writing', 'deployed'].includes(b.status));
  const batchId = params.get('batch') ?? printable[0]?.id ?? '';
  const batch = printable.find((b) => b.id === batchId);

  return (
    <>
      <PageHeader title="Print labels" description="Label sheets with vector QR codes and the serial under each, as a PDF to print at 100% scale." />
      {batches.error ? (
        <ErrorState error={batches.error} onRetry={batches.reload} />
      ) : !batches.data ? (
        <Loading />
      ) : printable.length === 0 ? (
        <Empty title="No batch is ready to print">A batch can be printed once its nodes are generated.</Empty>
      ) : (
        <LabelPrinter
          subject={`Label sheets of ${batch?.label ?? 'the batch'}`}
          subjectKey={batchId}
          prefer="sheet"
          preview={(o, page) => printingApi.batchSvg(batchId, o, page)}
          pdf={(o, test) => printingApi.batchPdf(batchId, o, test)}
        >
          <Field label="Batch">
            {(c) => (
              <select {...c} className="input" value={batchId} onChange={(e) => setSearchParams({ batch: e.target.value })}>
                {printable.map((b) => (
                  <option key={b.id} value={b.id}>
                    {b.label} ({b.prefix}, {b.quantity})
                  </option>
                ))}
              </select>
            )}
          </Field>
          {batch ? <ProvisionalSerialsNotice batch={batch} /> : null}
        </LabelPrinter>
      )}
    </>
  );
}
