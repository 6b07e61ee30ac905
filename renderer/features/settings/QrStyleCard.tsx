import { type FormEvent, useEffect, useState } from 'react';
import { Button } from '../../components/Button.tsx';
import { Field } from '../../components/Field.tsx';
import { Card } from '../../components/PageHeader.tsx';
import { Select } from '../../components/Select.tsx';
import { ErrorState, Loading } from '../../components/States.tsx';
import { ApiError } from '../../lib/api.ts';
import { type QrStyleDefaultsT, type QrStyleForm, qrStyleApi } from '../../lib/qrStyle.ts';
import { errorMessage, toast } from '../../lib/toast.ts';
import { useResource } from '../../lib/useResource.ts';
import { MAX_FRAME_TEXT, type ModuleStyle } from '../../../server/schemas/qrStyle.ts';

const STYLE_OPTIONS: { value: ModuleStyle; label: string }[] = [
  { value: 'square', label: 'Square' },
  { value: 'rounded', label: 'Rounded' },
  { value: 'dots', label: 'Dots' },
];

/** Waits this long after the last change before asking for a new preview (typing a colour). */
const PREVIEW_DELAY_MS = 250;

function formOf(d: QrStyleDefaultsT): QrStyleForm {
  return { fg: d.fg, bg: d.bg, module_style: d.module_style, logo: d.logo, frame_text: d.frame_text ?? '' };
}

/**
 * The organization's QR code style: colours, module style, logo and frame, with a live preview
 * of the unsaved form (GET /organization/qr-style/preview). The server refuses colours a reader
 * may fail on; the preview shows its message in place of the code.
 */
export function QrStyleCard() {
  const saved = useResource(() => qrStyleApi.get(), []);
  if (saved.error) return <ErrorState error={saved.error} onRetry={saved.reload} title="Could not load the QR code style" />;
  if (!saved.data) return <Loading />;
  return <QrStyleEditor initial={saved.data} />;
}

function QrStyleEditor({ initial }: { initial: QrStyleDefaultsT }) {
  const [defaults, setDefaults] = useState(initial);
  const [form, setForm] = useState<QrStyleForm>(() => formOf(initial));
  const [preview, setPreview] = useState<{ src: string } | { error: string } | null>(null);
  const [busy, setBusy] = useState<'save' | 'logo' | null>(null);
  const [logoError, setLogoError] = useState<string | undefined>();
  const set = (patch: Partial<QrStyleForm>) => setForm((f) => ({ ...f, ...patch }));

  useEffect(() => {
    const abort = new AbortController();
    const timer = setTimeout(() => {
      qrStyleApi.preview(form, abort.signal).then(
        // A data: URL (not blob:) so nothing needs revoking when the next preview replaces it.
        async (blob) => setPreview({ src: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(await blob.text())}` }),
        (err: unknown) => {
          if (!abort.signal.aborted) setPreview({ error: errorMessage(err) });
        },
      );
    }, PREVIEW_DELAY_MS);
    return () => {
      clearTimeout(timer);
      abort.abort();
    };
  }, [form, defaults.logo_image?.updated_at]);

  const save = async (e: FormEvent) => {
    e.preventDefault();
    setBusy('save');
    try {
      const next = await qrStyleApi.update({ fg: form.fg, bg: form.bg, module_style: form.module_style, logo: form.logo, frame_text: form.frame_text.trim() || null });
      setDefaults(next);
      setForm(formOf(next));
      toast.success('QR code style saved: new codes and label prints use it');
    } catch (err) {
      toast.error(errorMessage(err));
    } finally {
      setBusy(null);
    }
  };

  const logoChange = async (files: FileList | null) => {
    const file = files?.[0];
    if (!file) return;
    setBusy('logo');
    setLogoError(undefined);
    try {
      const next = await qrStyleApi.uploadLogo(file);
      setDefaults(next);
      set({ logo: true });
    } catch (err) {
      setLogoError(err instanceof ApiError && err.details.data_base64 ? `The file ${err.details.data_base64}` : errorMessage(err));
    } finally {
      setBusy(null);
    }
  };

  const removeLogo = async () => {
    setBusy('logo');
    try {
      const next = await qrStyleApi.deleteLogo();
      setDefaults(next);
      set({ logo: false });
    } catch (err) {
      toast.error(errorMessage(err));
    } finally {
      setBusy(null);
    }
  };

  const logo = defaults.logo_image;
  return (
    <Card title="QR code style">
      <div className="qr-style">
        <form onSubmit={save} aria-label="QR code style" className="qr-style-form" noValidate>
          <div className="qr-style-colours">
            <Field label="Foreground">{(c) => <input {...c} type="color" className="input input-colour" value={form.fg.toLowerCase()} onChange={(e) => set({ fg: e.target.value.toUpperCase() })} />}</Field>
            <Field label="Background">{(c) => <input {...c} type="color" className="input input-colour" value={form.bg.toLowerCase()} onChange={(e) => set({ bg: e.target.value.toUpperCase() })} />}</Field>
          </div>
          <Field label="Modules">{(c) => <Select control={c} value={form.module_style} options={STYLE_OPTIONS} onChange={(v) => set({ module_style: v })} />}</Field>
          <Field label="Call to action" hint={`Printed in a frame under the code; empty for no frame (at most ${MAX_FRAME_TEXT} characters).`}>
            {(c) => <input {...c} className="input" maxLength={MAX_FRAME_TEXT} placeholder="Scan for the menu" value={form.frame_text} onChange={(e) => set({ frame_text: e.target.value })} />}
          </Field>
          <Field
            label="Logo"
            error={logoError}
            hint={logo ? `${logo.width} × ${logo.height} px (${logo.uploaded_as === 'image/svg+xml' ? 'from an SVG' : 'PNG'}). Codes with the logo use error correction H.` : 'PNG or SVG, at most 256 KiB. It goes in the centre; codes then use error correction H.'}
          >
            {(c) => <input {...c} type="file" accept="image/png,image/svg+xml,.svg,.png" onChange={(e) => void logoChange(e.target.files)} />}
          </Field>
          {logo ? (
            <label className="checkbox">
              <input type="checkbox" checked={form.logo} onChange={(e) => set({ logo: e.target.checked })} /> Put the logo on codes
            </label>
          ) : null}
          <div className="button-row">
            <Button type="submit" variant="primary" busy={busy === 'save'}>
              Save QR code style
            </Button>
            {logo ? (
              <Button busy={busy === 'logo'} onClick={() => void removeLogo()}>
                Remove the logo
              </Button>
            ) : null}
          </div>
        </form>
        <figure className="qr-style-preview" aria-live="polite">
          {preview === null ? (
            <Loading />
          ) : 'src' in preview ? (
            <img src={preview.src} alt="Preview of a code in this style" data-testid="qr-style-preview" />
          ) : (
            <p className="field-error" role="alert" data-testid="qr-style-preview-error">
              {preview.error}
            </p>
          )}
          <figcaption className="field-hint">Preview (unsaved changes included). Labels and GET /nodes/&#123;slug&#125;/qr use the saved style unless a request says otherwise.</figcaption>
        </figure>
      </div>
    </Card>
  );
}
