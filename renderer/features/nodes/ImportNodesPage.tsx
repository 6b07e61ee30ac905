import { useState } from 'react';
import { Button } from '../../components/Button.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { Notice } from '../../components/States.tsx';
import { api, type ImportReportT, type NodesFile } from '../../lib/api.ts';
import { navigate } from '../../lib/router.ts';
import { errorMessage, toast } from '../../lib/toast.ts';

/** Errors shown in the preview; the rest are counted (a file can fail on thousands of rows). */
const ERRORS_SHOWN = 200;

function formatOf(file: File, text: string): NodesFile['format'] {
  if (/\.json$/i.test(file.name) || file.type === 'application/json') return 'json';
  if (/\.csv$/i.test(file.name) || file.type === 'text/csv') return 'csv';
  return text.trimStart().startsWith('{') ? 'json' : 'csv';
}

function plural(n: number, word: string): string {
  return `${n.toLocaleString()} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * Import nodes from a CSV or JSON file (an export edited in a spreadsheet, or a new list): the
 * file is checked by the server first (a dry run: nothing written) and its row errors shown; then
 * imported, all rows or, when asked, only the valid ones.
 */
export function ImportNodesPage() {
  const [file, setFile] = useState<(NodesFile & { name: string }) | null>(null);
  const [preview, setPreview] = useState<ImportReportT | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [skipInvalid, setSkipInvalid] = useState(false);
  const [busy, setBusy] = useState<'check' | 'import' | null>(null);

  const choose = async (chosen: File | undefined) => {
    setPreview(null);
    setFailure(null);
    setFile(null);
    if (!chosen) return;
    const text = await chosen.text();
    const picked = { name: chosen.name, text, format: formatOf(chosen, text) };
    setFile(picked);
    setBusy('check');
    try {
      setPreview(await api.nodes.importFile(picked, { mode: 'partial', dryRun: true }));
    } catch (err) {
      setFailure(errorMessage(err));
    } finally {
      setBusy(null);
    }
  };

  const runImport = async () => {
    if (!file) return;
    setBusy('import');
    try {
      const report = await api.nodes.importFile(file, { mode: skipInvalid ? 'partial' : 'all', dryRun: false });
      const skipped = report.failed > 0 ? `; ${plural(report.failed, 'row')} with errors skipped` : '';
      toast.success(`Imported: ${report.created.toLocaleString()} created, ${report.updated.toLocaleString()} updated, ${report.unchanged.toLocaleString()} unchanged${skipped}.`);
      navigate('/nodes');
    } catch (err) {
      toast.fromError(err);
    } finally {
      setBusy(null);
    }
  };

  const failed = preview?.failed ?? 0;
  const importable = preview !== null && (failed === 0 || skipInvalid) && preview.created + preview.updated > 0;

  return (
    <>
      <PageHeader
        title="Import nodes"
        description="Create or update many nodes from a spreadsheet: a CSV or JSON file with the columns an export writes."
        actions={<Button onClick={() => navigate('/nodes')}>Back to nodes</Button>}
      />
      <section className="card" aria-labelledby="import-file-title">
        <div className="card-header">
          <h2 id="import-file-title">1. Choose a file</h2>
        </div>
        <div className="card-body">
          <p className="muted">
            Columns: <code>label</code>, <code>function_type</code>, <code>payload.&lt;field&gt;</code> (e.g. <code>payload.url</code>), <code>template_id</code>,{' '}
            <code>status</code>. A row with the <code>slug</code> or <code>serial</code> of an existing node updates it. Up to 5,000 rows. Start from an export (Nodes →
            Export CSV) to edit your nodes in bulk.
          </p>
          <label className="field-label" htmlFor="import-file">
            CSV or JSON file
          </label>
          <input id="import-file" className="input" type="file" accept=".csv,.json,text/csv,application/json" onChange={(e) => void choose(e.target.files?.[0])} />
        </div>
      </section>
      {busy === 'check' ? (
        <p role="status" className="muted">
          Checking {file?.name}…
        </p>
      ) : null}
      {failure ? <Notice kind="error">{`The file cannot be imported: ${failure}`}</Notice> : null}
      {preview && file ? (
        <section className="card" aria-labelledby="import-preview-title">
          <div className="card-header">
            <h2 id="import-preview-title">2. Preview of {file.name}</h2>
          </div>
          <div className="card-body">
            <p role="status" data-testid="import-summary">
              {plural(preview.created, 'new node')}, {plural(preview.updated, 'update')}, {preview.unchanged.toLocaleString()} unchanged, {plural(failed, 'row')} with errors.
            </p>
            {failed > 0 ? (
              <>
                <table className="table" aria-label="Rows with errors">
                  <thead>
                    <tr>
                      <th scope="col">Row</th>
                      <th scope="col">Column</th>
                      <th scope="col">Problem</th>
                    </tr>
                  </thead>
                  <tbody>
                    {preview.errors.slice(0, ERRORS_SHOWN).map((e, i) => (
                      <tr key={i}>
                        <td>{e.row}</td>
                        <td>
                          <code>{e.field}</code>
                        </td>
                        <td>{e.message}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
                {preview.errors.length > ERRORS_SHOWN ? <p className="muted">…and {(preview.errors.length - ERRORS_SHOWN).toLocaleString()} more.</p> : null}
                <label className="checkbox">
                  <input type="checkbox" checked={skipInvalid} onChange={(e) => setSkipInvalid(e.target.checked)} />
                  Import the valid rows and skip the {plural(failed, 'row')} with errors
                </label>
              </>
            ) : null}
            <div className="button-row form-actions">
              <Button variant="primary" busy={busy === 'import'} disabled={!importable} onClick={() => void runImport()}>
                Import
              </Button>
            </div>
            {!importable && preview.created + preview.updated === 0 && failed === 0 ? <p className="muted">Nothing to import: every row matches its node already.</p> : null}
          </div>
        </section>
      ) : null}
    </>
  );
}
