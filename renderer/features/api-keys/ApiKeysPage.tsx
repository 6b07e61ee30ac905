import { type FormEvent, useState } from 'react';
import { CreateApiKeyBody } from '../../../server/schemas/apiKeys.ts';
import { PLANS, type Plan } from '../../../server/schemas/common.ts';
import { Button, FormActions } from '../../components/Button.tsx';
import { SecretBox } from '../../components/CopyButton.tsx';
import { ConfirmAction, Dialog } from '../../components/Dialog.tsx';
import { Field } from '../../components/Field.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { Empty, ErrorState, Loading, Notice } from '../../components/States.tsx';
import { ApiError, api, type ApiKeyT } from '../../lib/api.ts';
import { formatDate, humanize } from '../../lib/format.ts';
import { errorMessage } from '../../lib/toast.ts';
import { useResource } from '../../lib/useResource.ts';
import { useFormErrors } from '../../lib/useFormErrors.ts';
import { validate } from '../../lib/validation.ts';

export function ApiKeysPage() {
  const keys = useResource(() => api.keys.list(), []);
  const me = useResource(() => api.instance(), []);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<{ name: string; key: string } | null>(null);
  const [revoking, setRevoking] = useState<ApiKeyT | null>(null);

  return (
    <>
      <PageHeader
        title="API keys"
        description="Keys for scripts, integrations and other consoles. A key gives full access to this organization; it is shown once, when created."
        actions={
          <Button variant="primary" onClick={() => setCreating(true)}>
            New API key
          </Button>
        }
      />
      {created ? (
        <div className="card card-highlight" data-testid="created-key">
          <SecretBox label={`API key “${created.name}”`} value={created.key} warning="Copy it now: it is shown only this once and cannot be retrieved later." />
          <div className="form-actions">
            <Button onClick={() => setCreated(null)}>Done</Button>
          </div>
        </div>
      ) : null}
      <section className="card">
        {keys.error ? (
          <ErrorState error={keys.error} onRetry={keys.reload} title="Could not load API keys" />
        ) : !keys.data ? (
          <Loading label="Loading API keys…" />
        ) : keys.data.data.length === 0 ? (
          <Empty title="No API keys" />
        ) : (
          <div className="table-wrap">
            <table className="table">
              <caption className="visually-hidden">API keys</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col">Plan</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.data.data.map((k) => {
                  const current = me.data?.key.id === k.id;
                  return (
                    <tr key={k.id}>
                      <td className="strong" data-label="Name">
                        {k.name} {current ? <span className="tag">this session</span> : null}
                      </td>
                      <td className="mono" data-label="Key">
                        {k.prefix}…
                      </td>
                      <td data-label="Plan">{humanize(k.plan)}</td>
                      <td className="nowrap" data-label="Created">
                        {formatDate(k.created_at)}
                      </td>
                      <td className="nowrap" data-label="Last used">
                        {k.last_used_at ? formatDate(k.last_used_at) : 'Never'}
                      </td>
                      <td className="actions-cell">
                        <Button size="sm" variant="ghost" onClick={() => setRevoking(k)} aria-label={`Revoke ${k.name}`} disabled={current} title={current ? 'The console is signed in with this key' : undefined}>
                          Revoke
                        </Button>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <CreateKeyDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(name, key) => {
          setCreating(false);
          setCreated({ name, key });
          keys.reload();
        }}
      />
      <ConfirmAction
        target={revoking}
        title={(k) => `Revoke ${k.name}?`}
        message={() => 'Every request made with this key fails at once (401). This cannot be undone.'}
        confirmLabel="Revoke key"
        danger
        action={(k) => api.keys.revoke(k.id)}
        success={(k) => `Key ${k.name} revoked`}
        onDone={() => keys.reload()}
        onClose={() => setRevoking(null)}
      />
    </>
  );
}

function CreateKeyDialog({ open, onClose, onCreated }: { open: boolean; onClose(): void; onCreated(name: string, key: string): void }) {
  const [name, setName] = useState('');
  const [plan, setPlan] = useState<Plan>('developer');
  const { errors, setErrors, formRef } = useFormErrors();
  const [formError, setFormError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const body = { name, plan };
    const c = validate(CreateApiKeyBody, body);
    setErrors(c.ok ? {} : c.errors);
    if (!c.ok) return;
    setBusy(true);
    setFormError(undefined);
    try {
      const created = await api.keys.create(body);
      setName('');
      onCreated(created.name, created.api_key);
    } catch (err) {
      if (err instanceof ApiError && err.status === 422) setErrors(err.details);
      setFormError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog open={open} title="New API key" onClose={onClose}>
      <form ref={formRef} onSubmit={submit} noValidate aria-label="New API key">
        <Field label="Key name" required error={errors.name ? `Name ${errors.name}` : undefined} hint="Say who or what uses it, e.g. “Inventory script”.">
          {(c) => <input {...c} className="input" value={name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <Field label="Plan" hint="Rate limits: developer 100/min, pro 500/min, enterprise custom." error={errors.plan ? `Plan ${errors.plan}` : undefined}>
          {(c) => (
            <select {...c} className="input" value={plan} onChange={(e) => setPlan(e.target.value as Plan)}>
              {PLANS.map((p) => (
                <option key={p} value={p}>
                  {humanize(p)}
                </option>
              ))}
            </select>
          )}
        </Field>
        {formError ? <Notice kind="error">{formError}</Notice> : null}
        <FormActions submitLabel="Create key" busy={busy} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
