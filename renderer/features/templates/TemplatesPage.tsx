import { type FormEvent, useRef, useState } from 'react';
import type { z } from 'zod';
import { FUNCTION_TYPES, type FunctionType } from '../../../server/schemas/common.ts';
import { payloadFields, payloadSchemas } from '../../../server/schemas/payloads.ts';
import { CreateTemplateBody } from '../../../server/schemas/templates.ts';
import { Tag } from '../../components/Badge.tsx';
import { Button, FormActions } from '../../components/Button.tsx';
import { ConfirmAction } from '../../components/Dialog.tsx';
import { Field, FieldSet } from '../../components/Field.tsx';
import { Card, PageHeader } from '../../components/PageHeader.tsx';
import { Empty, ErrorState, Loading, Notice } from '../../components/States.tsx';
import { PayloadForm } from '../../components/payload/PayloadForm.tsx';
import { cleanPayload, mergePatch, summarizePayload } from '../../components/payload/fields.ts';
import { api, type TemplateT } from '../../lib/api.ts';
import { formatDate, typeLabel } from '../../lib/format.ts';
import { toast } from '../../lib/toast.ts';
import { useResource } from '../../lib/useResource.ts';
import { useFormSubmit } from '../../lib/useFormSubmit.ts';
import { type FieldErrors, scoped, validate } from '../../lib/validation.ts';

/** A template's payload may be partial: each given field is checked on its own (as the server does). */
function checkPartial(type: FunctionType, payload: Record<string, unknown>): FieldErrors {
  const shape = (payloadSchemas[type] as unknown as { shape: Record<string, z.ZodType> }).shape;
  const errors: FieldErrors = {};
  for (const [k, v] of Object.entries(payload)) {
    const r = shape[k]?.safeParse(v);
    if (r && !r.success) errors[`payload.${k}`] = r.error.issues[0]?.message ?? 'is invalid';
  }
  return errors;
}

export function TemplatesPage() {
  const templates = useResource(() => api.templates.list(100), []);
  const [editing, setEditing] = useState<TemplateT | 'new' | null>(null);
  const [deleting, setDeleting] = useState<TemplateT | null>(null);
  // Closing the inline form gives the focus back to the button that opened it.
  const refocusNew = useRef(false);
  return (
    <>
      <PageHeader
        title="Templates"
        description="Shared defaults for nodes and batches. Locked fields cannot be changed on the nodes; changing them here updates every bound node."
        actions={
          editing ? null : (
            <Button
              variant="primary"
              onClick={() => setEditing('new')}
              ref={(el) => {
                if (el && refocusNew.current) el.focus();
                refocusNew.current = false;
              }}
            >
              New template
            </Button>
          )
        }
      />
      {editing ? (
        <Card title={editing === 'new' ? 'New template' : `Edit ${editing.name}`}>
          <TemplateForm
            key={editing === 'new' ? 'new' : editing.id}
            initial={editing === 'new' ? undefined : editing}
            onDone={() => {
              refocusNew.current = true;
              setEditing(null);
              templates.reload();
            }}
            onCancel={() => {
              refocusNew.current = true;
              setEditing(null);
            }}
          />
        </Card>
      ) : null}
      <section className="card">
        {templates.error ? (
          <ErrorState error={templates.error} onRetry={templates.reload} title="Could not load templates" />
        ) : !templates.data ? (
          <Loading label="Loading templates…" />
        ) : templates.data.data.length === 0 ? (
          <Empty title="No templates yet">A template holds content shared by many nodes, such as a company’s Wi-Fi or a brand’s website.</Empty>
        ) : (
          <div className="table-wrap">
            <table className="table">
              <caption className="visually-hidden">Templates</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col">Content</th>
                  <th scope="col">Locked fields</th>
                  <th scope="col">Updated</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {templates.data.data.map((t) => (
                  <tr key={t.id}>
                    <td className="strong" data-label="Name">
                      {t.name}
                    </td>
                    <td data-label="Type">{typeLabel(t.function_type)}</td>
                    <td className="truncate" data-label="Content">{summarizePayload(t.function_type, t.payload) || '—'}</td>
                    <td data-label="Locked fields">
                      {t.locked_fields.length === 0 ? (
                        <span className="muted">None</span>
                      ) : (
                        <span className="chips">
                          {t.locked_fields.map((f) => (
                            <Tag key={f}>{f}</Tag>
                          ))}
                        </span>
                      )}
                    </td>
                    <td className="nowrap" data-label="Updated">
                      {formatDate(t.updated_at)}
                    </td>
                    <td className="actions-cell">
                      <Button size="sm" onClick={() => setEditing(t)} aria-label={`Edit ${t.name}`}>
                        Edit
                      </Button>
                      <Button size="sm" variant="ghost" onClick={() => setDeleting(t)} aria-label={`Delete ${t.name}`}>
                        Delete
                      </Button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <ConfirmAction
        target={deleting}
        title={(t) => `Delete ${t.name}?`}
        message={() => 'Nodes bound to it are unbound and keep their current content.'}
        confirmLabel="Delete template"
        danger
        action={(t) => api.templates.remove(t.id)}
        success={() => 'Template deleted'}
        onDone={() => templates.reload()}
        onClose={() => setDeleting(null)}
      />
    </>
  );
}

function TemplateForm({ initial, onDone, onCancel }: { initial?: TemplateT | undefined; onDone(): void; onCancel(): void }) {
  const [name, setName] = useState(initial?.name ?? '');
  const [type, setType] = useState<FunctionType>(initial?.function_type ?? 'redirect');
  const [payload, setPayload] = useState<Record<string, unknown>>(initial?.payload ?? {});
  const [locked, setLocked] = useState<string[]>(initial?.locked_fields ?? []);
  const { errors, formRef, formError, busy, send } = useFormSubmit({ refused: 'The server did not accept the template', focusFirst: true });

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const clean = cleanPayload(type, payload);
    const body = { name, function_type: type, payload: clean, locked_fields: locked };
    const c = validate(CreateTemplateBody, body);
    const clientErrors = { ...(c.ok ? {} : c.errors), ...checkPartial(type, clean) };
    for (const f of locked) if (!(f in clean)) clientErrors[`payload.${f}`] = 'must have a value when locked';
    await send(clientErrors, async () => {
      if (initial) {
        await api.templates.update(initial.id, { name, payload: mergePatch(initial.payload, clean), locked_fields: locked });
        toast.success('Template saved');
      } else {
        await api.templates.create(body);
        toast.success('Template created');
      }
      onDone();
    });
  };

  return (
    <form ref={formRef} onSubmit={submit} noValidate aria-label={initial ? 'Edit template' : 'New template'}>
      <div className="two-cols">
        <Field label="Template name" required error={errors.name ? `Name ${errors.name}` : undefined}>
          {(c) => <input {...c} className="input" value={name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <Field label="Type" hint={initial ? 'The type of a template cannot change.' : undefined}>
          {(c) => (
            <select
              {...c}
              className="input"
              value={type}
              disabled={Boolean(initial)}
              onChange={(e) => {
                setType(e.target.value as FunctionType);
                setPayload({});
                setLocked([]);
              }}
            >
              {FUNCTION_TYPES.map((t) => (
                <option key={t} value={t}>
                  {typeLabel(t)}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <PayloadForm type={type} value={payload} onChange={setPayload} errors={scoped(errors, 'payload')} />
      <FieldSet legend="Locked fields" hint="Nodes using this template cannot change these." error={errors.locked_fields ?? Object.entries(errors).find(([k]) => k.startsWith('locked_fields.'))?.[1]}>
        <div className="checkbox-row">
          {payloadFields[type].map((f) => (
            <label key={f} className="checkbox">
              <input type="checkbox" checked={locked.includes(f)} onChange={() => setLocked(locked.includes(f) ? locked.filter((x) => x !== f) : [...locked, f])} />
              Lock {f}
            </label>
          ))}
        </div>
      </FieldSet>
      {formError ? <Notice kind="error">{formError}</Notice> : null}
      <FormActions submitLabel={initial ? 'Save template' : 'Create template'} busy={busy} onCancel={onCancel} />
    </form>
  );
}
