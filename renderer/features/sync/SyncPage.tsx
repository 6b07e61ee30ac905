import { type FormEvent, useState } from 'react';
import { PairBody } from '../../../server/schemas/syncPairing.ts';
import { Button, FormActions } from '../../components/Button.tsx';
import { Field } from '../../components/Field.tsx';
import { Card, PageHeader } from '../../components/PageHeader.tsx';
import { Empty, ErrorState, Loading, Notice } from '../../components/States.tsx';
import { ApiError, api, type SyncConflictT, type SyncStatusT } from '../../lib/api.ts';
import { formatDate, formatNumber, humanize } from '../../lib/format.ts';
import { errorMessage, toast } from '../../lib/toast.ts';
import { sentence, validate } from '../../lib/validation.ts';
import { useFormErrors } from '../../lib/useFormErrors.ts';
import { useLiveSyncStatus, useSyncStatus } from './store.ts';

export function SyncPage() {
  const { status, error, refresh } = useLiveSyncStatus();

  return (
    <>
      <PageHeader
        title="Sync"
        description="A site works offline and syncs with the company’s remote Waymark instance; slugs come from blocks the remote leases, so no two sites mint the same one."
        actions={status?.mode === 'site' ? <SyncNowButton /> : null}
      />
      {!status ? (
        error ? <ErrorState error={error} onRetry={() => void refresh()} title="Could not load the sync status" /> : <Loading label="Loading the sync status…" />
      ) : status.mode === 'standalone' ? (
        <PairForm />
      ) : (
        <Paired status={status} />
      )}
    </>
  );
}

function SyncNowButton() {
  const setStatus = useSyncStatus((s) => s.set);
  const [busy, setBusy] = useState(false);
  return (
    <Button
      busy={busy}
      onClick={async () => {
        setBusy(true);
        try {
          setStatus(await api.sync.run());
        } catch (err) {
          toast.fromError(err);
        } finally {
          setBusy(false);
        }
      }}
    >
      Sync now
    </Button>
  );
}

/** Pairing (standalone), or a new key for the remote this site is paired with (`remote` fixed). */
function PairForm({ remote: fixedRemote }: { remote?: string }) {
  const setStatus = useSyncStatus((s) => s.set);
  const [remote, setRemote] = useState(fixedRemote ?? '');
  const [key, setKey] = useState('');
  const { errors, setErrors, formRef } = useFormErrors();
  const [formError, setFormError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const body = { remote: remote.trim(), remote_key: key.trim() };
    const checked = validate(PairBody, body);
    setErrors(checked.ok ? {} : checked.errors);
    setFormError(undefined);
    if (!checked.ok) return;
    setBusy(true);
    try {
      const status = await api.sync.pair(body);
      setKey('');
      setStatus(status);
      toast.success(`Paired with ${status.remote ?? body.remote}`);
    } catch (err) {
      if (err instanceof ApiError && err.status === 422) setErrors(err.details);
      setFormError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Card title={fixedRemote ? 'Give this site a new remote key' : 'Pair with a remote'}>
      <form ref={formRef} onSubmit={submit} noValidate aria-label={fixedRemote ? 'New remote key' : 'Pair with a remote'} className="sync-pair-form">
        {fixedRemote ? null : (
          <p className="muted">
            This instance is standalone. Pair it with your company’s remote Waymark instance to sync with it. Pairing is for good: this data cannot be paired with
            another remote later.
          </p>
        )}
        <Field
          label="Remote URL"
          required
          error={errors.remote ? sentence('Remote URL', errors.remote) : undefined}
          hint={fixedRemote ? 'This site is paired with this remote.' : 'The remote’s origin, e.g. https://waymark.example.com'}
        >
          {(c) => <input {...c} className="input" value={remote} readOnly={Boolean(fixedRemote)} onChange={(e) => setRemote(e.target.value)} placeholder="https://" autoComplete="off" />}
        </Field>
        <Field
          label="Remote API key"
          required
          error={errors.remote_key ? sentence('Remote API key', errors.remote_key) : undefined}
          hint="A key of your organization on the remote (waymark keys create on the remote). It is checked with the remote, then kept encrypted or in an owner-only file, never shown again."
        >
          {(c) => <input {...c} className="input mono" type="password" value={key} onChange={(e) => setKey(e.target.value)} autoComplete="off" spellCheck={false} />}
        </Field>
        {formError ? <Notice kind="error">{formError}</Notice> : null}
        <FormActions submitLabel={fixedRemote ? 'Use this key' : 'Pair'} busy={busy} />
      </form>
    </Card>
  );
}

function Paired({ status }: { status: SyncStatusT }) {
  // No key, or the remote refused it (a refusal is an answer: online with an error).
  const needsKey = status.remote !== null && status.last_error !== null && status.online !== false;
  return (
    <>
      {status.last_error ? <Notice kind={status.online === false ? 'warning' : 'error'}>{status.last_error}</Notice> : null}
      {needsKey ? <PairForm remote={status.remote!} /> : null}
      <div className="detail-grid">
        <Card title="Remote">
          <dl className="facts facts-wide" aria-label="Remote">
            <dt>State</dt>
            <dd>
              <span className={`badge badge-${status.online === true ? 'green' : 'grey'}`}>{status.online === true ? 'Online' : status.online === false ? 'Offline' : 'Not contacted yet'}</span>
              {status.paired ? null : <span className="muted"> · not registered yet</span>}
            </dd>
            <dt>Remote</dt>
            <dd>
              <code className="break">{status.remote}</code>
            </dd>
            <dt>Organization</dt>
            <dd>{status.remote_org?.name ?? '—'}</dd>
            <dt>Site id</dt>
            <dd>
              <code>{status.site_id}</code>
            </dd>
            <dt>Incarnation</dt>
            <dd>
              <code>{status.incarnation}</code>
            </dd>
            <dt>Last success</dt>
            <dd>{status.last_success_at ? formatDate(status.last_success_at) : 'Never since start'}</dd>
            <dt>Last attempt</dt>
            <dd>{status.last_attempt_at ? formatDate(status.last_attempt_at) : '—'}</dd>
            <dt>Next attempt</dt>
            <dd>{status.next_attempt_at ? formatDate(status.next_attempt_at) : '—'}</dd>
            <dt>Last error</dt>
            <dd>{status.last_error ?? 'None'}</dd>
          </dl>
        </Card>
        <Card title="Local data">
          <dl className="facts" aria-label="Local data">
            <dt>Pending changes</dt>
            <dd data-testid="sync-pending">{formatNumber(status.pending_changes)}</dd>
            <dt>Slug reserve</dt>
            <dd data-testid="sync-reserve">
              {formatNumber(status.reserve.slugs_left)} slugs left
              <span className="muted">
                {' '}
                · {status.reserve.blocks} of {status.reserve.target_blocks} blocks
              </span>
            </dd>
          </dl>
          <p className="field-hint">Offline, new nodes take slugs from the reserve; creation stops only when it is empty. It refills when the remote is reachable.</p>
        </Card>
      </div>
      <Conflicts conflicts={status.conflicts} />
    </>
  );
}

function Conflicts({ conflicts }: { conflicts: SyncConflictT[] }) {
  const refresh = useSyncStatus((s) => s.refresh);
  const [busy, setBusy] = useState<number | null>(null);
  // Older servers have no resolve endpoint: the list stays read-only there.
  const [readOnly, setReadOnly] = useState(false);
  return (
    <Card title={`Conflicts${conflicts.length ? ` (${conflicts.length})` : ''}`}>
      {conflicts.length === 0 ? (
        <Empty title="No conflicts">Changes that could not be applied as they were (e.g. an edit of a node deleted elsewhere) are listed here for a decision.</Empty>
      ) : (
        <>
          {readOnly ? <Notice kind="info">This server cannot mark conflicts resolved yet: the list is read-only.</Notice> : null}
          <ul className="sync-conflicts" aria-label="Conflicts">
            {conflicts.map((c) => (
              <li key={c.id} className="sync-conflict">
                <div className="sync-conflict-head">
                  <span className="badge badge-amber">{humanize(c.kind)}</span>
                  <span className="muted">{formatDate(c.detected_at)}</span>
                </div>
                <dl className="facts">
                  {Object.entries(c.detail).map(([k, v]) => (
                    <Detail key={k} name={k} value={v} />
                  ))}
                </dl>
                {readOnly ? null : (
                  <div className="button-row">
                    <Button
                      size="sm"
                      busy={busy === c.id}
                      onClick={async () => {
                        setBusy(c.id);
                        try {
                          await api.sync.resolveConflict(c.id);
                          toast.success('Conflict marked resolved');
                          await refresh();
                        } catch (err) {
                          if (err instanceof ApiError && err.isMissingEndpoint) setReadOnly(true);
                          else toast.fromError(err);
                        } finally {
                          setBusy(null);
                        }
                      }}
                    >
                      Mark resolved
                    </Button>
                  </div>
                )}
              </li>
            ))}
          </ul>
        </>
      )}
    </Card>
  );
}

function Detail({ name, value }: { name: string; value: unknown }) {
  const text = Array.isArray(value)
    ? value.join(', ')
    : typeof value === 'object' && value !== null
      ? JSON.stringify(value)
      : typeof value === 'string' && /^[a-z]+(_[a-z]+)+$/.test(value)
        ? humanize(value) // an enum such as held_by_other_site
        : String(value);
  return (
    <>
      <dt>{humanize(name)}</dt>
      <dd className="break">{text}</dd>
    </>
  );
}
