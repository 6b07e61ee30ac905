import { useEffect, useRef, useState } from 'react';
import { Button } from '../../components/Button.tsx';
import { Dialog } from '../../components/Dialog.tsx';
import { Card } from '../../components/PageHeader.tsx';
import { Loading, Notice } from '../../components/States.tsx';
import { ApiError, type NodeT } from '../../lib/api.ts';
import { writeNodeTag, type ReaderStatus } from './client.ts';
import { beep, unlockAudio } from './feedback.ts';
import { OutcomeBanner, type Outcome } from './TagFeedback.tsx';
import { readerUnusable, useNfcEvents } from '../../lib/nfcEvents.ts';
import './program-tags.css';
import { errorMessage } from '../../lib/toast.ts';

type Tone = 'ok' | 'warn' | 'bad';
const READER: Record<ReaderStatus['state'], { tone: Tone; title: string }> = {
  ready: { tone: 'ok', title: 'Reader ready' },
  card_present: { tone: 'ok', title: 'Tag on the reader' },
  starting: { tone: 'warn', title: 'Starting the NFC bridge…' },
  no_reader: { tone: 'warn', title: 'No NFC reader connected' },
  no_daemon: { tone: 'bad', title: 'The PC/SC service (pcscd) is not running' },
  unavailable: { tone: 'bad', title: 'NFC is not available on this machine' },
};

/** The reader's state in one line, with the bridge's own explanation. */
export function ReaderLine({ reader }: { reader: ReaderStatus }) {
  const t = READER[reader.state];
  return (
    <p data-reader-state={reader.state}>
      <span className="reader-pill">
        <span className={`reader-dot reader-dot-${t.tone}`} aria-hidden="true" />
        {t.title}
      </span>
      {reader.message && reader.message.replace(/\.$/, '').toLowerCase() !== t.title.toLowerCase() ? <span className="muted"> — {reader.message}</span> : null}
    </p>
  );
}

/** Node page tab: write this node's scan URL to the tag on the reader (POST /v1/nfc/write). */
export function WriteNodeTag({ node }: { node: NodeT }) {
  const live = useNfcEvents();
  const [reassign, setReassign] = useState(false);
  const [lock, setLock] = useState(false);
  const [confirmOpen, setConfirmOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const abort = useRef<AbortController | null>(null);
  const name = node.serial ?? node.slug;
  // Leaving the tab stops listening for the reply (the server still finishes or times out the write).
  useEffect(() => () => abort.current?.abort(), []);

  const write = async (withLock: boolean) => {
    unlockAudio();
    setBusy(true);
    setOutcome(null);
    abort.current = new AbortController();
    try {
      const written = await writeNodeTag(node.slug, { lock: withLock, confirmLock: withLock, reassign, timeoutMs: 30_000 }, abort.current.signal);
      beep('success');
      setOutcome({ kind: 'success', written });
    } catch (err) {
      if (err instanceof DOMException && err.name === 'AbortError') return;
      beep('failure');
      const message = err instanceof ApiError && Object.keys(err.details).length > 0 ? Object.values(err.details).join('; ') : errorMessage(err);
      setOutcome({ kind: 'failure', refusal: { message } });
    } finally {
      setBusy(false);
      abort.current = null;
    }
  };

  const unusable = live.reader !== null && readerUnusable(live.reader);
  return (
    <Card title="Write NFC tag">
      {live.error ? (
        <Notice kind={live.error.status === 403 || live.error.status === 404 ? 'warning' : 'error'}>
          {live.error.status === 404
            ? 'NFC programming is not available on this server.'
            : live.error.status === 403
              ? 'NFC tags can only be written from the console on the machine the reader is plugged into.'
              : `Cannot follow the NFC reader: ${live.error.message}`}
        </Notice>
      ) : !live.reader ? (
        <Loading label="Looking for the reader…" />
      ) : readerUnusable(live.reader) ? (
        <Notice kind={live.reader.state === 'no_reader' ? 'warning' : 'error'}>
          <ReaderLine reader={live.reader} />
          <span data-nfc-blocked="">Tags cannot be written until this is fixed{live.reader.fix ? `: ${live.reader.fix}` : '.'}</span>
        </Notice>
      ) : (
        <ReaderLine reader={live.reader} />
      )}
      <div className="tag-prompt" aria-live="polite">
        <p className="muted">{busy ? 'Waiting for a tag on the reader (up to 30 s)…' : 'Place a tag on the reader, then write'}</p>
        <p className="tag-prompt-big mono">{name}</p>
        <p className="muted mono">{node.url}?nfc</p>
      </div>
      <OutcomeBanner outcome={outcome} />
      <label className="checkbox">
        <input type="checkbox" checked={reassign} onChange={(e) => setReassign(e.target.checked)} />
        Take the tag over if it is bound to another node
      </label>
      <label className="checkbox">
        <input type="checkbox" checked={lock} onChange={(e) => setLock(e.target.checked)} />
        Lock the tag after writing (permanent)
      </label>
      <div className="button-row">
        <Button variant="primary" busy={busy} disabled={unusable || live.error !== null} onClick={() => (lock ? setConfirmOpen(true) : void write(false))}>
          Write NFC tag
        </Button>
      </div>
      <Dialog
        open={confirmOpen}
        title="Lock the tag permanently?"
        onClose={() => setConfirmOpen(false)}
        footer={
          <>
            <Button onClick={() => setConfirmOpen(false)}>Cancel</Button>
            <Button
              variant="danger"
              onClick={() => {
                setConfirmOpen(false);
                void write(true);
              }}
            >
              Write and lock
            </Button>
          </>
        }
      >
        <p>
          A locked tag can never be rewritten: if {name} ever needs a different URL, the tag must be replaced. Its scan URL never changes, so locking is safe
          for tags in public places.
        </p>
      </Dialog>
    </Card>
  );
}
