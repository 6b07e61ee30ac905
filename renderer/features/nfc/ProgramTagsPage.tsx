import { type FormEvent, useState } from 'react';
import type { TagProtection } from '../../../server/schemas/nfc.ts';
import { Button, FormActions } from '../../components/Button.tsx';
import { Field } from '../../components/Field.tsx';
import { Card, PageHeader } from '../../components/PageHeader.tsx';
import { ScanBaseCheck } from '../../components/ScanBaseCheck.tsx';
import { Empty, ErrorState, Loading, Notice } from '../../components/States.tsx';
import { ApiError, api } from '../../lib/api.ts';
import { formatDate } from '../../lib/format.ts';
import { scanBaseAllows, useOrganization } from '../../lib/organization.ts';
import { errorMessage, toast } from '../../lib/toast.ts';
import { type NfcLive, readerUnusable, type TagReading, useNfcEvents } from '../../lib/nfcEvents.ts';
import { useResource } from '../../lib/useResource.ts';

type Status = Awaited<ReturnType<typeof api.nfc.status>>;
type Session = NonNullable<Status['session']>;

const READER_TEXT: Record<string, { tone: 'success' | 'warning' | 'error' | 'info'; title: string }> = {
  ready: { tone: 'success', title: 'Reader ready: place a tag on it' },
  card_present: { tone: 'info', title: 'Tag on the reader' },
  starting: { tone: 'info', title: 'Starting the NFC bridge…' },
  no_reader: { tone: 'warning', title: 'No NFC reader connected' },
  no_daemon: { tone: 'error', title: 'The PC/SC service (pcscd) is not running' },
  unavailable: { tone: 'error', title: 'NFC is not available on this machine' },
};

/**
 * Program NFC tags: the reader's state and the batch writing session, live from the NFC event
 * stream (GET /v1/nfc/events: one open request, no polling). An action's own answer is shown
 * at once; the stream's next session event replaces it.
 */
export function ProgramTagsPage() {
  const live = useNfcEvents();
  // The session an action answered, until the stream reports a newer one.
  const [answered, setAnswered] = useState<{ session: Session | null; after: NfcLive['session'] } | null>(null);
  const session = answered && answered.after === live.session ? answered.session : (live.session ?? null);
  const onChange = (s: Session | null) => setAnswered({ session: s, after: live.session });

  if (live.error?.isMissingEndpoint) {
    return (
      <>
        <PageHeader title="Program tags" />
        <Empty title="NFC programming is not available on this server" />
      </>
    );
  }
  return (
    <>
      <PageHeader title="Program tags" description="Write each node's scan URL to an NFC tag (NTAG213/215/216), verified by reading it back." />
      {live.error && !live.reader ? <ErrorState error={live.error} title="Could not reach the NFC bridge" /> : null}
      {!live.reader || live.session === undefined ? (
        live.error ? null : <Loading label="Looking for the reader…" />
      ) : (
        <>
          <ReaderCard reader={live.reader} />
          {session && session.status === 'active' ? (
            <SessionCard session={session} onChange={onChange} />
          ) : (
            <>
              <TagCheck tag={live.tag} reader={live.reader} />
              <StartSession last={session} reader={live.reader} onStarted={onChange} />
            </>
          )}
        </>
      )}
    </>
  );
}

function ReaderCard({ reader }: { reader: Status['reader'] }) {
  const t = READER_TEXT[reader.state] ?? { tone: 'info' as const, title: reader.state };
  return (
    <Card title="Reader">
      <Notice kind={t.tone}>
        <strong>{t.title}</strong>
        {reader.message && reader.message.replace(/\.$/, '').toLowerCase() !== t.title.toLowerCase() ? ` — ${reader.message}` : ''}
        {reader.fix ? <span className="nfc-fix"> {reader.fix}</span> : null}
      </Notice>
      {reader.readers.length > 0 ? <p className="muted">Readers: {reader.readers.join(', ')}</p> : null}
      {reader.cards.map((c) => (
        <p key={c.info.uid} className="muted">
          Tag <code>{c.info.uid}</code> {c.info.type ?? ''} {c.info.supported ? '' : `— ${c.info.refusal?.message ?? 'not supported'}`}
        </p>
      ))}
    </Card>
  );
}

/**
 * Check mode: with no session running, a tag placed on the reader is read and shown: the node
 * whose URL it holds (label, serial, status), blank, or another URL; what protects it and whether
 * that checks for this organization; warnings such as two tags with one URL.
 */
function TagCheck({ tag, reader }: { tag: TagReading | null; reader: Status['reader'] }) {
  if (readerUnusable(reader)) return null;
  return (
    <Card title="Check a tag">
      <div aria-live="polite" data-tag-check={tag ? tag.content : 'none'}>
        {!tag ? (
          <p className="muted">Place a tag on the reader to see what it holds.</p>
        ) : (
          <>
            <p>
              <strong>{CHECK_TITLE[tag.content]}</strong> — {tag.message}
            </p>
            {tag.node ? (
              <dl className="nfc-check">
                <dt>Serial</dt>
                <dd className="mono">{tag.node.serial ?? '—'}</dd>
                <dt>Label</dt>
                <dd>{tag.node.label}</dd>
                <dt>Status</dt>
                <dd>{tag.node.status}</dd>
              </dl>
            ) : null}
            <p className="muted">
              {tag.type ?? 'Tag'} <code>{tag.uid}</code>
              {tag.url && tag.content !== 'other_url' ? (
                <>
                  {' '}
                  · <span className="mono">{tag.url}</span>
                </>
              ) : null}
            </p>
            {tag.protection ? (
              <p data-tag-protection={tag.protection.kind} data-verifies={tag.protection.verifies === null ? 'n/a' : String(tag.protection.verifies)}>
                <strong>{PROTECTION_TITLE[tag.protection.kind]}</strong> — {tag.protection.message}
              </p>
            ) : null}
            {tag.warning ? <Notice kind="warning">{tag.warning}</Notice> : null}
          </>
        )}
      </div>
    </Card>
  );
}

const PROTECTION_TITLE: Record<NonNullable<TagReading['protection']>['kind'], string> = {
  none: 'No tap proof',
  ntag424_sun: 'NTAG 424 DNA secure messages',
  ntag21x: 'NTAG21x mirror and password',
};

const CHECK_TITLE: Record<TagReading['content'], string> = {
  node: 'Written',
  blank: 'Blank',
  other_url: 'Another URL',
  other_data: 'Not a URL',
  unsupported: 'Cannot be used',
};

function StartSession({ last, reader, onStarted }: { last: Session | null; reader: Status['reader']; onStarted(session: Session): void }) {
  const unusable = readerUnusable(reader);
  const batches = useResource(() => api.batches.list({ limit: 100 }), []);
  const writable = (batches.data?.data ?? []).filter((b) => b.status === 'ready' || b.status === 'writing');
  const [batchId, setBatchId] = useState('');
  const [lock, setLock] = useState(false);
  const [confirmLock, setConfirmLock] = useState(false);
  const [reassign, setReassign] = useState(false);
  const [mirror, setMirror] = useState(false);
  const [protect, setProtect] = useState(false);
  const [test, setTest] = useState(false);
  const { organization } = useOrganization();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const id = batchId || writable[0]?.id;
    if (!id) return;
    setBusy(true);
    setError(undefined);
    try {
      onStarted(await api.nfc.start({ batch_id: id, ...(lock ? { lock, confirm_lock: confirmLock } : {}), ...(reassign ? { allow_reassign: true } : {}), ...(mirror ? { mirror } : {}), ...(protect ? { protect } : {}), ...(test ? { allow_local_scan_base: true } : {}) }));
    } catch (err) {
      setError(err instanceof ApiError && Object.keys(err.details).length > 0 ? Object.values(err.details).join('; ') : errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Card title="Write a batch">
      {last && last.status === 'completed' ? <Notice kind="success">Batch {last.batch_label}: all {last.counts.written} tags written.</Notice> : null}
      {batches.error ? (
        <ErrorState error={batches.error} onRetry={batches.reload} />
      ) : !batches.data ? (
        <Loading />
      ) : writable.length === 0 ? (
        <Empty title="No batch is ready for writing">Create a batch; once it is ready its tags can be written here.</Empty>
      ) : (
        <form onSubmit={submit} aria-label="Start writing a batch">
          <Field label="Batch">
            {(c) => (
              <select {...c} className="input" value={batchId || writable[0]!.id} onChange={(e) => setBatchId(e.target.value)}>
                {writable.map((b) => (
                  <option key={b.id} value={b.id}>
                    {b.label} ({b.prefix}, {b.nodes_written}/{b.quantity} written)
                  </option>
                ))}
              </select>
            )}
          </Field>
          <label className="checkbox">
            <input type="checkbox" checked={reassign} onChange={(e) => setReassign(e.target.checked)} />
            Take over tags already bound to other nodes
          </label>
          <label className="checkbox">
            <input type="checkbox" checked={mirror} onChange={(e) => setMirror(e.target.checked)} />
            Mirror each tag’s UID and tap counter into its URL (NTAG213/215/216: evidence of a tap, not proof)
          </label>
          <label className="checkbox">
            <input type="checkbox" checked={protect} onChange={(e) => setProtect(e.target.checked)} />
            Protect each tag with its own password (NTAG213/215/216: cannot be rewritten in the field)
          </label>
          <label className="checkbox">
            <input type="checkbox" checked={lock} onChange={(e) => setLock(e.target.checked)} />
            Lock each tag after writing
          </label>
          {lock ? (
            <Notice kind="warning">
              <label className="checkbox">
                <input type="checkbox" checked={confirmLock} onChange={(e) => setConfirmLock(e.target.checked)} />I understand that locking is permanent: a locked tag can never be rewritten.
              </label>
            </Notice>
          ) : null}
          <ScanBaseCheck what="tags" test={test} onTestChange={setTest} />
          {error ? <Notice kind="error">{error}</Notice> : null}
          {unusable ? (
            <Notice kind="warning">
              <span data-nfc-blocked="">
                Tags cannot be written until this is fixed: {reader.message}
                {reader.fix ? ` ${reader.fix}` : ''}
              </span>
            </Notice>
          ) : null}
          <FormActions submitLabel="Start writing" busy={busy} disabled={unusable || (lock && !confirmLock) || !scanBaseAllows(organization, test)} />
        </form>
      )}
    </Card>
  );
}

function SessionCard({ session, onChange }: { session: Session; onChange(session: Session | null): void }) {
  const [busy, setBusy] = useState<string | null>(null);
  const act = async (name: string, fn: () => Promise<unknown>) => {
    setBusy(name);
    try {
      const answer = await fn();
      // Session actions answer the session; a retry answers the tag (the stream brings the session).
      if (answer && typeof answer === 'object' && 'counts' in answer) onChange(answer as Session);
    } catch (err) {
      toast.fromError(err);
    } finally {
      setBusy(null);
    }
  };
  const { counts } = session;
  const pct = counts.total > 0 ? Math.round((counts.written / counts.total) * 100) : 0;
  return (
    <Card title={`Writing ${session.batch_label}`} actions={<Button variant="danger" busy={busy === 'stop'} onClick={() => act('stop', api.nfc.stop)}>Stop</Button>}>
      <div className="nfc-next" aria-live="polite">
        {session.next ? (
          <>
            <p className="muted">Place the tag for</p>
            <p className="nfc-serial mono">{session.next.serial ?? session.next.slug}</p>
            <p className="muted mono">{session.next.url}</p>
            {session.next.revisit ? <p className="muted">(skipped earlier)</p> : null}
          </>
        ) : (
          <p className="nfc-serial">Done</p>
        )}
      </div>
      <div className="progress-label">
        <span>Written</span>
        <span>
          {counts.written} / {counts.total} · skipped {counts.skipped} · lost {counts.lost}
        </span>
      </div>
      <div className="progress" role="progressbar" aria-label="Tags written" aria-valuemin={0} aria-valuemax={counts.total} aria-valuenow={counts.written}>
        <span style={{ width: `${pct}%` }} />
      </div>
      {session.last_refusal ? (
        <Notice kind="error">
          {session.last_refusal.message}
          {session.last_refusal.code === 'uid_bound' && session.last_refusal.bound_to ? ` (bound to ${session.last_refusal.bound_to.serial ?? session.last_refusal.bound_to.slug} “${session.last_refusal.bound_to.label}”)` : ''}
        </Notice>
      ) : null}
      <div className="button-row">
        <Button busy={busy === 'retry'} onClick={() => act('retry', () => api.nfc.retry(false))}>
          Write tag on reader
        </Button>
        {/* Only a tag bound elsewhere may be taken over; a finished tag (already_written) is lifted, not reassigned. */}
        {session.last_refusal?.code === 'uid_bound' ? (
          <Button busy={busy === 'reassign'} onClick={() => act('reassign', () => api.nfc.retry(true))}>
            Take this tag over
          </Button>
        ) : null}
        <Button busy={busy === 'skip'} onClick={() => act('skip', api.nfc.skip)}>
          Skip
        </Button>
        <Button busy={busy === 'redo'} onClick={() => act('redo', api.nfc.redo)}>
          Write last again
        </Button>
        <Button busy={busy === 'lost'} onClick={() => act('lost', api.nfc.lost)}>
          Report lost
        </Button>
      </div>
      {session.recent.length > 0 ? (
        <div className="table-wrap">
          <table className="table table-compact">
            <caption className="visually-hidden">Recently written tags</caption>
            <thead>
              <tr>
                <th scope="col">Serial</th>
                <th scope="col">Chip UID</th>
                <th scope="col">Protection</th>
                <th scope="col">Written</th>
              </tr>
            </thead>
            <tbody>
              {session.recent.map((r) => (
                <tr key={`${r.slug}-${r.written_at}`}>
                  <td className="mono" data-label="Serial">
                    {r.serial ?? r.slug}
                  </td>
                  <td className="mono" data-label="Chip UID">
                    {r.hardware_id}
                  </td>
                  <td data-label="Protection">{protectionLabel(r.protection)}</td>
                  <td data-label="Written">{formatDate(r.written_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </Card>
  );
}

/** What protects a written tag, in the technician's words (docs/nfc.md, "Protection per tag"). */
const PROTECTION_LABELS: Record<TagProtection, string> = {
  none: 'None: plain URL',
  ntag424_sun: 'NTAG 424 DNA: every tap carries a proof',
  ntag21x_mirror: 'NTAG21x mirror: UID and tap counter in the URL (evidence, not proof)',
  ntag21x_password: 'NTAG21x password: cannot be rewritten in the field',
  ntag21x_mirror_password: 'NTAG21x mirror and password: tap evidence, cannot be rewritten in the field',
};

function protectionLabel(protection: TagProtection): string {
  return PROTECTION_LABELS[protection];
}
