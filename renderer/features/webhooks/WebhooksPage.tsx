import { type FormEvent, useState } from 'react';
import { CreateWebhookBody, type WebhookEventType } from '../../../server/schemas/webhooks.ts';
import { StatusBadge, Tag } from '../../components/Badge.tsx';
import { Button, FormActions } from '../../components/Button.tsx';
import { SecretBox } from '../../components/CopyButton.tsx';
import { ConfirmAction, Dialog } from '../../components/Dialog.tsx';
import { Field, FieldSet } from '../../components/Field.tsx';
import { PageHeader } from '../../components/PageHeader.tsx';
import { Empty, ErrorState, Loading, Notice } from '../../components/States.tsx';
import { ApiError, type DeliveryT, type WebhookCreatedT, WEBHOOK_EVENT_TYPES, api, type WebhookT } from '../../lib/api.ts';
import { formatDate } from '../../lib/format.ts';
import { errorMessage, toast } from '../../lib/toast.ts';
import { useResource } from '../../lib/useResource.ts';
import { useFormErrors } from '../../lib/useFormErrors.ts';
import { validate } from '../../lib/validation.ts';

const DEFAULT_EVENTS = WEBHOOK_EVENT_TYPES.filter((e) => e !== 'webhook.disabled');

function missing(e: unknown): boolean {
  return e instanceof ApiError && e.isMissingEndpoint;
}

export function WebhooksPage() {
  const hooks = useResource(() => api.webhooks.list(), []);
  const [creating, setCreating] = useState(false);
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<WebhookT | null>(null);

  return (
    <>
      <PageHeader
        title="Webhooks"
        description="Your servers learn about scans, batches and tags as they happen. Every delivery is signed (Standard Webhooks) and retried until it succeeds."
        actions={
          missing(hooks.error) ? null : (
            <Button variant="primary" onClick={() => setCreating(true)}>
              New webhook
            </Button>
          )
        }
      />
      {secret ? (
        <div className="card card-highlight" data-testid="webhook-secret">
          <SecretBox label={`Signing secret for ${secret.url}`} value={secret.secret} warning="Store it in your receiver now: it is shown only this once." />
          <div className="form-actions">
            <Button onClick={() => setSecret(null)}>Done</Button>
          </div>
        </div>
      ) : null}
      <section className="card">
        {hooks.error ? (
          missing(hooks.error) ? (
            <Empty title="Webhooks are not available on this server">This Waymark server does not include webhook delivery yet.</Empty>
          ) : (
            <ErrorState error={hooks.error} onRetry={hooks.reload} title="Could not load webhooks" />
          )
        ) : !hooks.data ? (
          <Loading label="Loading webhooks…" />
        ) : hooks.data.data.length === 0 ? (
          <Empty title="No webhooks yet" action={<Button onClick={() => setCreating(true)}>Add a webhook</Button>}>
            Add the address of a receiver on your server.
          </Empty>
        ) : (
          <ul className="webhook-list">
            {hooks.data.data.map((h) => (
              <li key={h.id} className="webhook">
                <div className="webhook-head">
                  <div>
                    <p className="strong mono break">{h.url}</p>
                    {h.description ? <p className="muted">{h.description}</p> : null}
                    {h.disabled ? (
                      <p className="field-error">
                        Disabled automatically {formatDate(h.disabled.at)}: {h.disabled.reason}. Enable it again once the receiver works.
                      </p>
                    ) : h.failing_since ? (
                      <p className="field-error">Failing since {formatDate(h.failing_since)}; deliveries are being retried.</p>
                    ) : null}
                    <p className="chips">
                      {h.events.map((e) => (
                        <Tag key={e}>{e}</Tag>
                      ))}
                    </p>
                  </div>
                  <div className="webhook-side">
                    <StatusBadge status={h.active ? 'active' : 'disabled'} />
                    <span className="muted">{formatDate(h.created_at)}</span>
                  </div>
                </div>
                <div className="button-row">
                  <TestButton id={h.id} />
                  <Button size="sm" onClick={() => setOpen(open === h.id ? null : h.id)} aria-expanded={open === h.id}>
                    {open === h.id ? 'Hide deliveries' : 'Deliveries'}
                  </Button>
                  <Button
                    size="sm"
                    onClick={async () => {
                      try {
                        await api.webhooks.update(h.id, { active: !h.active });
                        hooks.reload();
                      } catch (err) {
                        toast.fromError(err);
                      }
                    }}
                  >
                    {h.active ? 'Disable' : 'Enable'}
                  </Button>
                  <Button
                    size="sm"
                    onClick={async () => {
                      try {
                        const rotated = await api.webhooks.rotateSecret(h.id);
                        setSecret({ url: h.url, secret: rotated.secret });
                        toast.info('New secret issued; the old one still signs for 24 hours');
                        hooks.reload();
                      } catch (err) {
                        toast.fromError(err);
                      }
                    }}
                  >
                    Rotate secret
                  </Button>
                  <Button size="sm" variant="ghost" onClick={() => setDeleting(h)}>
                    Delete
                  </Button>
                </div>
                {open === h.id ? <Deliveries id={h.id} /> : null}
              </li>
            ))}
          </ul>
        )}
      </section>
      <CreateWebhookDialog
        open={creating}
        onClose={() => setCreating(false)}
        onCreated={(h) => {
          setCreating(false);
          setSecret({ url: h.url, secret: h.secret });
          toast.success('Webhook created');
          hooks.reload();
        }}
      />
      <ConfirmAction
        target={deleting}
        title={() => 'Delete this webhook?'}
        message={(h) => `Nothing more is sent to ${h.url}.`}
        confirmLabel="Delete webhook"
        danger
        action={(h) => api.webhooks.remove(h.id)}
        success={() => 'Webhook deleted'}
        onDone={() => hooks.reload()}
        onClose={() => setDeleting(null)}
      />
    </>
  );
}

function TestButton({ id }: { id: string }) {
  const [busy, setBusy] = useState(false);
  return (
    <Button
      size="sm"
      busy={busy}
      onClick={async () => {
        setBusy(true);
        try {
          await api.webhooks.test(id);
          toast.success('Test event queued: see Deliveries');
        } catch (err) {
          toast.fromError(err);
        } finally {
          setBusy(false);
        }
      }}
    >
      Send test
    </Button>
  );
}

function Deliveries({ id }: { id: string }) {
  const deliveries = useResource(() => api.webhooks.deliveries(id), [id]);
  const redeliver = async (d: DeliveryT) => {
    try {
      await api.webhooks.redeliver(id, d.id);
      toast.success('Delivery queued again (same webhook-id)');
      deliveries.reload();
    } catch (err) {
      toast.fromError(err);
    }
  };
  return (
    <div className="deliveries">
      <div className="deliveries-head">
        <h3>Recent deliveries</h3>
        <Button size="sm" variant="ghost" onClick={deliveries.reload}>
          Refresh
        </Button>
      </div>
      {deliveries.error ? (
        <ErrorState error={deliveries.error} onRetry={deliveries.reload} />
      ) : !deliveries.data ? (
        <Loading label="Loading deliveries…" />
      ) : deliveries.data.data.length === 0 ? (
        <Empty title="No deliveries yet">Send a test event to check your receiver.</Empty>
      ) : (
        <div className="table-wrap">
          <table className="table table-compact">
            <caption className="visually-hidden">Deliveries</caption>
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Response</th>
                <th scope="col">Duration</th>
                <th scope="col">Error / next retry</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {deliveries.data.data.map((d) => {
                const last = d.attempts[d.attempts.length - 1];
                return (
                  <tr key={d.id}>
                    <td className="nowrap" data-label="Created">
                      {formatDate(d.created_at)}
                    </td>
                    <td className="mono" data-label="Event">
                      {d.event_type}
                    </td>
                    <td data-label="Status">
                      <StatusBadge status={d.status === 'succeeded' ? 'delivered' : d.status} />
                    </td>
                    <td className="num" data-label="Attempts">
                      {d.attempt_count}
                    </td>
                    <td data-label="Response">{d.last_status_code ?? '—'}</td>
                    <td data-label="Duration">{last ? `${last.duration_ms} ms` : '—'}</td>
                    <td className="truncate" data-label="Error / retry" title={d.last_error ?? undefined}>
                      {d.last_error ?? ''}
                      {d.next_attempt_at ? ` retry ${formatDate(d.next_attempt_at)}` : d.last_error ? '' : '—'}
                    </td>
                    <td className="actions-cell">
                      {d.status === 'failed' ? (
                        <Button size="sm" variant="ghost" onClick={() => redeliver(d)}>
                          Redeliver
                        </Button>
                      ) : null}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}

function CreateWebhookDialog({ open, onClose, onCreated }: { open: boolean; onClose(): void; onCreated(h: WebhookCreatedT): void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<WebhookEventType[]>([...DEFAULT_EVENTS]);
  const { errors, setErrors, formRef } = useFormErrors();
  const [formError, setFormError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const body = { url: url.trim(), events, ...(description.trim() ? { description: description.trim() } : {}) };
    const c = validate(CreateWebhookBody, body);
    setErrors(c.ok ? {} : c.errors);
    if (!c.ok) return;
    setBusy(true);
    setFormError(undefined);
    try {
      const created = await api.webhooks.create(body);
      setUrl('');
      setDescription('');
      onCreated(created);
    } catch (err) {
      if (err instanceof ApiError && err.status === 422) setErrors(err.details);
      setFormError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  const eventsError = errors.events ?? Object.entries(errors).find(([k]) => k.startsWith('events.'))?.[1];
  return (
    <Dialog open={open} title="New webhook" onClose={onClose} wide>
      <form ref={formRef} onSubmit={submit} noValidate aria-label="New webhook">
        <Field label="Receiver URL" required error={errors.url ? `URL ${errors.url}` : undefined} hint="http or https; receivers on the LAN are fine.">
          {(c) => <input {...c} className="input" type="url" value={url} placeholder="https://example.com/waymark/events" onChange={(e) => setUrl(e.target.value)} />}
        </Field>
        <Field label="Description" error={errors.description ? `Description ${errors.description}` : undefined}>
          {(c) => <input {...c} className="input" value={description} onChange={(e) => setDescription(e.target.value)} />}
        </Field>
        <FieldSet legend="Events" error={eventsError ? `Events ${eventsError}` : undefined}>
          <div className="checkbox-grid">
            {WEBHOOK_EVENT_TYPES.map((ev) => (
              <label key={ev} className="checkbox mono">
                <input type="checkbox" checked={events.includes(ev)} onChange={() => setEvents(events.includes(ev) ? events.filter((x) => x !== ev) : [...events, ev])} />
                {ev}
              </label>
            ))}
          </div>
        </FieldSet>
        {formError ? <Notice kind="error">{formError}</Notice> : null}
        <FormActions submitLabel="Create webhook" busy={busy} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
