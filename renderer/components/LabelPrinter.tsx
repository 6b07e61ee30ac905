import { type FormEvent, type ReactNode, useEffect, useMemo, useState } from 'react';
import { CAPTIONS, DEFAULT_LAYOUT_ID, MAX_OFFSET_MM } from '../../server/schemas/printing.ts';
import { ApiError, api } from '../lib/api.ts';
import { desktopPrint, saveBlob } from '../lib/download.ts';
import { humanize } from '../lib/format.ts';
import { type LabelOptions, type PdfFile, printingApi, type SvgPage } from '../lib/printing.ts';
import { layoutTitle, parseOffset } from '../lib/printOptions.ts';
import { errorMessage, toast } from '../lib/toast.ts';
import { scanBaseAllows, useOrganization } from '../lib/organization.ts';
import { useResource } from '../lib/useResource.ts';
import { Button } from './Button.tsx';
import { Field } from './Field.tsx';
import { Card } from './PageHeader.tsx';
import { ScanBaseCheck } from './ScanBaseCheck.tsx';
import { Select } from './Select.tsx';
import { ErrorState, Loading, Notice, Spinner } from './States.tsx';

export interface LabelPrinterProps {
  /** What is printed, for the preview's text alternative: "Label of CAFE-001", "Label sheets of Cafe tables". */
  subject: string;
  /** Identifies what is printed (a node's slug, a batch id): a new one reloads the preview at page 1. */
  subjectKey: string;
  /** Which kind of layout to preselect: a roll label for one node, the default sheet for a batch. */
  prefer: 'roll' | 'sheet';
  preview(options: LabelOptions, page: number): Promise<SvgPage>;
  /** `test`: a test print although the scan base is loopback (allow_local_scan_base). */
  pdf(options: LabelOptions, test: boolean): Promise<PdfFile>;
  /** Fields above the layout picker (the batch picker). */
  children?: ReactNode;
}

type Busy = 'pdf' | 'print' | 'calibration' | 'profile' | null;

/**
 * Printing labels, one component for a batch's sheets and a node's label: layout, caption, printer
 * profile and calibration offsets, labels already used on the first sheet, cut marks; a live
 * preview of each page; the PDF (and Print… in the desktop app), the calibration page, and saving
 * the offsets as a printer profile.
 */
export function LabelPrinter({ subject, subjectKey, prefer, preview, pdf, children }: LabelPrinterProps) {
  const layouts = useResource(() => api.printing.layouts(), []);
  const printers = useResource(() => printingApi.printers(), []);
  const [layout, setLayout] = useState('');
  const [caption, setCaption] = useState<LabelOptions['caption']>('serial');
  const [printer, setPrinter] = useState('');
  const [dx, setDx] = useState('');
  const [dy, setDy] = useState('');
  const [start, setStart] = useState('');
  const [cutMarks, setCutMarks] = useState(false);
  const [codeStyle, setCodeStyle] = useState<'organization' | 'plain'>('organization');
  const [busy, setBusy] = useState<Busy>(null);
  const [profileName, setProfileName] = useState('');
  const [test, setTest] = useState(false);
  const { organization } = useOrganization();

  const list = layouts.data?.data ?? [];
  const chosen = layout || (prefer === 'roll' ? list.find((l) => l.kind === 'roll')?.id : undefined) || DEFAULT_LAYOUT_ID;
  const current = list.find((l) => l.id === chosen);
  const ox = parseOffset(dx);
  const oy = parseOffset(dy);
  const startNumber = start.trim() === '' ? 0 : Number(start);
  const startOk = Number.isInteger(startNumber) && startNumber >= 0 && (!current || startNumber < current.labels_per_page);
  const valid = ox !== 'bad' && oy !== 'bad' && startOk;
  // A label is permanent: on a loopback scan base only a test print (ScanBaseCheck).
  const printable = valid && scanBaseAllows(organization, test);
  const options: LabelOptions = {
    layout: chosen,
    caption,
    cut_marks: cutMarks,
    start: startOk ? startNumber : 0,
    printer: printer || undefined,
    offset_x: ox === 'bad' ? undefined : ox,
    offset_y: oy === 'bad' ? undefined : oy,
    code_style: codeStyle,
  };
  // The page shown, for these options only: any change of what is printed goes back to page 1.
  const optionsKey = JSON.stringify([subjectKey, options]);
  const [shown, setShown] = useState({ key: optionsKey, page: 1 });
  const page = shown.key === optionsKey ? shown.page : 1;
  const setPage = (p: number) => setShown({ key: optionsKey, page: p });

  const svg = useResource(
    () => (layouts.data && valid ? preview(options, page) : Promise.resolve(null)),
    [optionsKey, page, Boolean(layouts.data), valid],
  );
  const src = useMemo(() => (svg.data ? URL.createObjectURL(svg.data.svg) : null), [svg.data]);
  useEffect(
    () => () => {
      if (src) URL.revokeObjectURL(src);
    },
    [src],
  );

  const run = async (what: 'pdf' | 'print' | 'calibration') => {
    setBusy(what);
    try {
      const file = what === 'calibration' ? await printingApi.calibrationPdf(chosen, options) : await pdf(options, test);
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
    if (!profileName.trim() || !valid) return;
    setBusy('profile');
    try {
      // The offsets in effect: typed ones, else the selected profile's.
      const from = printers.data?.find((x) => x.id === printer);
      const p = await printingApi.createPrinter({
        name: profileName.trim(),
        layout: chosen,
        offset_x: options.offset_x ?? from?.offset_x ?? 0,
        offset_y: options.offset_y ?? from?.offset_y ?? 0,
      });
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
  const pages = svg.data?.pages ?? 1;
  const offsetError = `A number from −${MAX_OFFSET_MM} to ${MAX_OFFSET_MM}`;
  const detail = current ? layoutTitle(current.name).detail : '';
  const groups = [
    { label: 'Label sheets', items: list.filter((l) => l.kind === 'sheet') },
    { label: 'Label printers (one label per page)', items: list.filter((l) => l.kind === 'roll') },
  ];
  return (
    <div className="detail-grid">
      <Card title="Preview">
        <div className="label-preview" aria-busy={svg.loading}>
          {svg.error ? (
            <ErrorState error={svg.error} onRetry={svg.reload} title="No preview" />
          ) : src ? (
            <img src={src} alt={`${subject}, page ${page} of ${pages}, on ${current?.name ?? chosen}`} data-testid="label-preview" />
          ) : valid ? (
            <Spinner label="Rendering the preview" />
          ) : (
            <p className="muted">Correct the options to see the preview.</p>
          )}
        </div>
        {pages > 1 ? (
          <nav className="pagination" aria-label="Preview pages">
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
          </nav>
        ) : null}
        <p className="muted">Print the PDF at 100 % (“Actual size”), not “Fit to page”.</p>
      </Card>
      <Card title="Print options">
        {children}
        <Field label="Layout" hint={current ? `${detail ? `${detail}. ` : ''}${current.columns} × ${current.rows} labels of ${current.label.width} × ${current.label.height} mm per page.` : undefined}>
          {(c) => (
            <select {...c} className="input" value={chosen} onChange={(e) => setLayout(e.target.value)}>
              {groups
                .filter((g) => g.items.length > 0)
                .map((g) => (
                  <optgroup key={g.label} label={g.label}>
                    {g.items.map((l) => (
                      <option key={l.id} value={l.id}>
                        {layoutTitle(l.name).title}
                      </option>
                    ))}
                  </optgroup>
                ))}
            </select>
          )}
        </Field>
        <Field label="Caption">
          {(c) => <Select control={c} value={caption} options={CAPTIONS.map((cap) => ({ value: cap, label: humanize(cap) }))} onChange={setCaption} />}
        </Field>
        <Field label="Code style" hint="The organization's QR code style is set in Settings (colours, logo, frame).">
          {(c) => (
            <Select
              control={c}
              value={codeStyle}
              options={[
                { value: 'organization', label: "Organization's style" },
                { value: 'plain', label: 'Plain (black on white)' },
              ]}
              onChange={setCodeStyle}
            />
          )}
        </Field>
        <Field label="Printer profile" hint={profile ? `Offsets ${profile.offset_x} / ${profile.offset_y} mm; offsets typed below win.` : 'Saved calibration offsets of a printer.'}>
          {(c) =>
            printers.error ? (
              <span className="muted">{errorMessage(printers.error)}</span>
            ) : (
              <select
                {...c}
                className="input"
                value={printer}
                onChange={(e) => {
                  setPrinter(e.target.value);
                  // A profile remembers the paper it is loaded with.
                  const layoutOfProfile = printers.data?.find((p) => p.id === e.target.value)?.layout;
                  if (layoutOfProfile && list.some((l) => l.id === layoutOfProfile)) setLayout(layoutOfProfile);
                }}
              >
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
          <Field label="Offset right (mm)" error={ox === 'bad' ? offsetError : undefined}>
            {(c) => <input {...c} className="input" inputMode="decimal" placeholder={profile ? String(profile.offset_x) : '0'} value={dx} onChange={(e) => setDx(e.target.value)} />}
          </Field>
          <Field label="Offset down (mm)" error={oy === 'bad' ? offsetError : undefined}>
            {(c) => <input {...c} className="input" inputMode="decimal" placeholder={profile ? String(profile.offset_y) : '0'} value={dy} onChange={(e) => setDy(e.target.value)} />}
          </Field>
        </div>
        {current && current.labels_per_page > 1 ? (
          <Field
            label="Labels already used on the first sheet"
            hint="Start further down a partly used sheet."
            error={startOk ? undefined : `A whole number from 0 to ${current.labels_per_page - 1}`}
          >
            {(c) => <input {...c} className="input input-narrow" inputMode="numeric" placeholder="0" value={start} onChange={(e) => setStart(e.target.value)} />}
          </Field>
        ) : null}
        <label className="checkbox">
          <input type="checkbox" checked={cutMarks} onChange={(e) => setCutMarks(e.target.checked)} />
          Cut marks
        </label>
        <ScanBaseCheck what="labels" test={test} onTestChange={setTest} />
        <div className="button-row form-actions">
          <Button variant="primary" busy={busy === 'pdf'} disabled={!printable} onClick={() => void run('pdf')}>
            Download PDF
          </Button>
          {desktopPrint && (
            <Button busy={busy === 'print'} disabled={!printable} onClick={() => void run('print')}>
              Print…
            </Button>
          )}
          <Button busy={busy === 'calibration'} disabled={ox === 'bad' || oy === 'bad'} onClick={() => void run('calibration')}>
            Calibration page
          </Button>
        </div>
        <form onSubmit={saveProfile} aria-label="Save these offsets as a printer profile" className="label-profile-form">
          <Field label="Save offsets as a printer profile" hint="Measure with the calibration page on plain paper, then save.">
            {(c) => <input {...c} className="input" placeholder="Office laser, tray 2" value={profileName} onChange={(e) => setProfileName(e.target.value)} />}
          </Field>
          <Button type="submit" size="sm" busy={busy === 'profile'} disabled={!profileName.trim() || ox === 'bad' || oy === 'bad'}>
            Save profile
          </Button>
        </form>
      </Card>
    </div>
  );
}
