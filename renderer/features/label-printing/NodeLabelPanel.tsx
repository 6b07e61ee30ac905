import { type FormEvent, useEffect, useMemo, useState } from 'react';
import { CAPTIONS, DEFAULT_LAYOUT_ID } from '../../../server/schemas/printing.ts';
import { Button } from '../../components/Button.tsx';
import { Select } from '../../components/Select.tsx';
import { Field } from '../../components/Field.tsx';
import { Card } from '../../components/PageHeader.tsx';
import { ErrorState, Loading, Notice, Spinner } from '../../components/States.tsx';
import { ApiError, api, type NodeT } from '../../lib/api.ts';
import { desktopPrint, saveBlob } from '../../lib/download.ts';
import { humanize } from '../../lib/format.ts';
import { errorMessage, toast } from '../../lib/toast.ts';
import { useResource } from '../../lib/useResource.ts';
import { type LabelOptions, printingApi } from './client.ts';
import './label-printing.css';

/** A millimetre offset as typed: '' = none, else a number within −10…10 (the server's range). */
function offset(text: string): number | undefined | 'bad' {
  if (text.trim() === '') return undefined;
  const n = Number(text);
  return Number.isFinite(n) && Math.abs(n) <= 10 ? n : 'bad';
}

/**
 * Node page tab: print this node's label. Layout, caption, printer profile or calibration
 * offsets, a live preview of the label's page (GET /v1/nodes/{slug}/label.svg) and the PDF.
 */
export function NodeLabelPanel({ node }: { node: NodeT }) {
  const layouts = useResource(() => api.printing.layouts(), []);
  const printers = useResource(() => printingApi.printers(), []);
  const [layout, setLayout] = useState('');
  const [caption, setCaption] = useState<LabelOptions['caption']>('serial');
  const [printer, setPrinter] = useState('');
  const [dx, setDx] = useState('');
  const [dy, setDy] = useState('');
  const [cutMarks, setCutMarks] = useState(false);
  const [busy, setBusy] = useState<'pdf' | 'print' | 'calibration' | 'profile' | null>(null);
  const [profileName, setProfileName] = useState('');

  // Single labels suit one node; fall back to the default sheet layout.
  const list = layouts.data?.data ?? [];
  const chosen = layout || list.find((l) => l.kind === 'roll')?.id || DEFAULT_LAYOUT_ID;
  const current = list.find((l) => l.id === chosen);
  const ox = offset(dx);
  const oy = offset(dy);
  const offsetsOk = ox !== 'bad' && oy !== 'bad';
  const options: LabelOptions = {
    layout: chosen,
    caption,
    cut_marks: cutMarks,
    start: 0,
    printer: printer || undefined,
    offset_x: ox === 'bad' ? undefined : ox,
    offset_y: oy === 'bad' ? undefined : oy,
  };
  const preview = useResource(
    () => (layouts.data && offsetsOk ? printingApi.nodeLabelSvg(node.slug, options) : Promise.resolve(null)),
    [node.slug, chosen, caption, cutMarks, printer, options.offset_x, options.offset_y, Boolean(layouts.data), offsetsOk],
  );
  const src = useMemo(() => (preview.data ? URL.createObjectURL(preview.data.svg) : null), [preview.data]);
  useEffect(
    () => () => {
      if (src) URL.revokeObjectURL(src);
    },
    [src],
  );

  const run = async (what: 'pdf' | 'print' | 'calibration') => {
    setBusy(what);
    try {
      const file = what === 'calibration' ? await printingApi.calibrationPdf(chosen, options) : await printingApi.nodeLabelPdf(node.slug, options);
      if (what === 'print' && desktopPrint) await desktopPrint(file.blob, file.filename);
      else saveBlob(file.blob, file.filename);
    } catch (err) {
      toast.fromError(err);
    } finally {
      setBusy(null);
    }
  };
  const saveProfile = async (e: FormEvent) => {
    e.preventDefault();
    if (!profileName.trim() || !offsetsOk) return;
    setBusy('profile');
    try {
      const p = await printingApi.createPrinter({ name: profileName.trim(), layout: chosen, offset_x: options.offset_x ?? 0, offset_y: options.offset_y ?? 0 });
      toast.success(`Printer profile “${p.name}” saved`);
      setProfileName('');
      printers.reload();
      setPrinter(p.id);
      setDx('');
      setDy('');
    } catch (err) {
      toast.error(err instanceof ApiError && Object.keys(err.details).length > 0 ? Object.values(err.details).join('; ') : errorMessage(err));
    } finally {
      setBusy(null);
    }
  };

  if (layouts.error instanceof ApiError && layouts.error.isMissingEndpoint) return <Notice kind="warning">Printing is not available on this server.</Notice>;
  if (layouts.error) return <ErrorState error={layouts.error} onRetry={layouts.reload} title="Could not load the label layouts" />;
  if (!layouts.data) return <Loading label="Loading label layouts…" />;
  const profile = printers.data?.find((p) => p.id === printer);
  return (
    <div className="detail-grid">
      <Card title="Label preview">
        <div className="label-preview" aria-busy={preview.loading}>
          {preview.error ? (
            <ErrorState error={preview.error} onRetry={preview.reload} title="No preview" />
          ) : src ? (
            <img src={src} alt={`Label of ${node.serial ?? node.slug} on ${current?.name ?? chosen}`} data-testid="label-preview" />
          ) : (
            <Spinner label="Rendering the preview" />
          )}
        </div>
        <p className="muted">Print the PDF at 100 % (“Actual size”), not “Fit to page”.</p>
      </Card>
      <Card title="Print options">
        <Field label="Layout" hint={current ? `${current.columns} × ${current.rows} labels of ${current.label.width} × ${current.label.height} mm per page` : undefined}>
          {(c) => <Select control={c} value={chosen} options={list.map((l) => ({ value: l.id, label: l.name }))} onChange={setLayout} />}
        </Field>
        <Field label="Caption">
          {(c) => <Select control={c} value={caption} options={CAPTIONS.map((cap) => ({ value: cap, label: humanize(cap) }))} onChange={setCaption} />}
        </Field>
        <Field label="Printer profile" hint={profile ? `Offsets ${profile.offset_x} / ${profile.offset_y} mm; offsets typed below win.` : 'Saved calibration offsets of a printer.'}>
          {(c) =>
            printers.error ? (
              <span className="muted">{printers.error instanceof Error ? printers.error.message : 'unavailable'}</span>
            ) : (
              <select {...c} className="input" value={printer} onChange={(e) => setPrinter(e.target.value)}>
                <option value="">None</option>
                {(printers.data ?? []).map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name}
                  </option>
                ))}
              </select>
            )
          }
        </Field>
        <div className="label-offsets">
          <Field label="Offset right (mm)" error={ox === 'bad' ? 'A number from −10 to 10' : undefined}>
            {(c) => <input {...c} className="input" inputMode="decimal" placeholder={profile ? String(profile.offset_x) : '0'} value={dx} onChange={(e) => setDx(e.target.value)} />}
          </Field>
          <Field label="Offset down (mm)" error={oy === 'bad' ? 'A number from −10 to 10' : undefined}>
            {(c) => <input {...c} className="input" inputMode="decimal" placeholder={profile ? String(profile.offset_y) : '0'} value={dy} onChange={(e) => setDy(e.target.value)} />}
          </Field>
        </div>
        <label className="checkbox">
          <input type="checkbox" checked={cutMarks} onChange={(e) => setCutMarks(e.target.checked)} />
          Cut marks
        </label>
        <div className="button-row">
          <Button variant="primary" busy={busy === 'pdf'} disabled={!offsetsOk} onClick={() => void run('pdf')}>
            Download PDF
          </Button>
          {desktopPrint && (
            <Button busy={busy === 'print'} disabled={!offsetsOk} onClick={() => void run('print')}>
              Print…
            </Button>
          )}
          <Button busy={busy === 'calibration'} disabled={!offsetsOk} onClick={() => void run('calibration')}>
            Calibration page
          </Button>
        </div>
        <form onSubmit={saveProfile} aria-label="Save these offsets as a printer profile">
          <Field label="Save offsets as a printer profile" hint="Measure with the calibration page on plain paper, then save.">
            {(c) => <input {...c} className="input" placeholder="Office laser, tray 2" value={profileName} onChange={(e) => setProfileName(e.target.value)} />}
          </Field>
          <Button type="submit" size="sm" busy={busy === 'profile'} disabled={!profileName.trim() || !offsetsOk}>
            Save profile
          </Button>
        </form>
      </Card>
    </div>
  );
}
