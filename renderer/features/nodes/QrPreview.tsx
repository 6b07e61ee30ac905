import { useEffect, useState } from 'react';
import { Button } from '../../components/Button.tsx';
import { Spinner } from '../../components/States.tsx';
import { ApiError, api } from '../../lib/api.ts';
import { saveBlob } from '../../lib/download.ts';
import { errorMessage, toast } from '../../lib/toast.ts';

/** The node's QR code from GET /v1/nodes/{slug}/qr (fetched with the key), with SVG/PNG downloads. */
export function QrPreview({ slug, url }: { slug: string; url: string }) {
  const [state, setState] = useState<{ kind: 'loading' } | { kind: 'ready'; src: string } | { kind: 'missing' } | { kind: 'error'; message: string }>({ kind: 'loading' });
  const [busy, setBusy] = useState<'svg' | 'png' | null>(null);

  useEffect(() => {
    let src: string | undefined;
    let cancelled = false;
    api.nodes.qr(slug, 'svg').then(
      (blob) => {
        if (cancelled) return;
        src = URL.createObjectURL(blob.type.includes('svg') ? blob : new Blob([blob], { type: 'image/svg+xml' }));
        setState({ kind: 'ready', src });
      },
      (err: unknown) => {
        if (cancelled) return;
        if (err instanceof ApiError && err.status === 404) setState({ kind: 'missing' });
        else setState({ kind: 'error', message: errorMessage(err) });
      },
    );
    return () => {
      cancelled = true;
      if (src) URL.revokeObjectURL(src);
    };
  }, [slug]);

  const download = async (format: 'svg' | 'png') => {
    setBusy(format);
    try {
      saveBlob(await api.nodes.qr(slug, format), `waymark-${slug}.${format}`);
    } catch (err) {
      toast.error(err instanceof ApiError && err.status === 404 ? 'QR images are not available on this server yet.' : `Download failed: ${errorMessage(err)}`);
    } finally {
      setBusy(null);
    }
  };

  return (
    <div className="qr">
      <div className="qr-frame">
        {state.kind === 'loading' ? <Spinner label="Loading QR code" /> : null}
        {state.kind === 'ready' ? <img src={state.src} alt={`QR code for ${url}`} width={180} height={180} /> : null}
        {state.kind === 'missing' || state.kind === 'error' ? (
          <div className="qr-placeholder" role="img" aria-label="QR preview unavailable">
            <svg viewBox="0 0 24 24" width="40" height="40" aria-hidden="true">
              <path d="M3 3h7v7H3zM14 3h7v7h-7zM3 14h7v7H3zM14 14h3v3h-3zM18 18h3v3h-3z" fill="none" stroke="currentColor" strokeWidth="1.5" />
            </svg>
            <span>{state.kind === 'missing' ? 'QR preview not available on this server' : state.message}</span>
          </div>
        ) : null}
      </div>
      <div className="qr-actions">
        <Button size="sm" busy={busy === 'svg'} onClick={() => download('svg')} disabled={state.kind === 'missing'}>
          Download SVG
        </Button>
        <Button size="sm" busy={busy === 'png'} onClick={() => download('png')} disabled={state.kind === 'missing'}>
          Download PNG
        </Button>
      </div>
    </div>
  );
}
