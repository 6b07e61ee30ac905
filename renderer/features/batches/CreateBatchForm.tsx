import { type FormEvent, useState } from 'react';
import { BATCH_FUNCTION_TYPES, CreateBatchBody } from '../../../server/schemas/batches.ts';
import { payloadSchemas } from '../../../server/schemas/payloads.ts';
import { FormActions } from '../../components/Button.tsx';
import { Field } from '../../components/Field.tsx';
import { Notice } from '../../components/States.tsx';
import { PayloadForm } from '../../components/payload/PayloadForm.tsx';
import { cleanPayload } from '../../components/payload/fields.ts';
import { api, type BatchT } from '../../lib/api.ts';
import { typeLabel } from '../../lib/format.ts';
import { useResource } from '../../lib/useResource.ts';
import { useFormSubmit } from '../../lib/useFormSubmit.ts';
import { scoped, validate } from '../../lib/validation.ts';

type BatchType = (typeof BATCH_FUNCTION_TYPES)[number];

export function CreateBatchForm({ onCreated, onCancel }: { onCreated(batch: BatchT): void; onCancel(): void }) {
  const [label, setLabel] = useState('');
  const [prefix, setPrefix] = useState('');
  const [quantity, setQuantity] = useState('25');
  const [type, setType] = useState<BatchType>('redirect');
  const [templateId, setTemplateId] = useState('');
  const [withPayload, setWithPayload] = useState(true);
  const [payload, setPayload] = useState<Record<string, unknown>>({});
  const { errors, setErrors, formRef, formError, busy, send } = useFormSubmit({ refused: 'The server did not accept the batch', focusFirst: true });
  const templates = useResource(() => api.templates.list(100), []);
  const forType = (templates.data?.data ?? []).filter((t) => t.function_type === type);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const base = cleanPayload(type, payload);
    const body = {
      label,
      prefix,
      quantity: quantity.trim() === '' ? Number.NaN : Number(quantity),
      function_type: type,
      ...(withPayload ? { base_payload: base } : {}),
      ...(templateId ? { template_id: templateId } : {}),
    };
    const c1 = validate(CreateBatchBody, body);
    const c2 = withPayload && !templateId ? validate(payloadSchemas[type], base, 'base_payload') : ({ ok: true } as const);
    await send({ ...(c1.ok ? {} : c1.errors), ...(c2.ok ? {} : c2.errors) }, async () => {
      onCreated(await api.batches.create(body));
    });
  };

  return (
    <form ref={formRef} onSubmit={submit} noValidate aria-label="New batch">
      <div className="two-cols">
        <Field label="Batch label" required error={errors.label ? `Label ${errors.label}` : undefined}>
          {(c) => <input {...c} className="input" value={label} onChange={(e) => setLabel(e.target.value)} placeholder="Cafe tables, spring" />}
        </Field>
        <Field label="Serial prefix" required error={errors.prefix ? `Prefix ${errors.prefix}` : undefined} hint={`Nodes are numbered ${prefix || 'PREFIX'}-001, ${prefix || 'PREFIX'}-002…`}>
          {(c) => <input {...c} className="input mono" value={prefix} onChange={(e) => setPrefix(e.target.value)} placeholder="CAFE" />}
        </Field>
        <Field label="Quantity" required error={errors.quantity ? `Quantity ${errors.quantity}` : undefined} hint="1 to 500.">
          {(c) => <input {...c} className="input input-narrow" type="number" min={1} max={500} value={quantity} onChange={(e) => setQuantity(e.target.value)} />}
        </Field>
        <Field label="Node type" error={errors.function_type ? `Type ${errors.function_type}` : undefined}>
          {(c) => (
            <select
              {...c}
              className="input"
              value={type}
              onChange={(e) => {
                setType(e.target.value as BatchType);
                setPayload({});
                setTemplateId('');
                setErrors({});
              }}
            >
              {BATCH_FUNCTION_TYPES.map((t) => (
                <option key={t} value={t}>
                  {typeLabel(t)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Template" error={errors.template_id ? `Template: ${errors.template_id}` : undefined} hint={forType.length === 0 ? `No ${typeLabel(type)} templates.` : undefined}>
          {(c) => (
            <select {...c} className="input" value={templateId} onChange={(e) => setTemplateId(e.target.value)} disabled={forType.length === 0}>
              <option value="">No template</option>
              {forType.map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <label className="checkbox">
        <input type="checkbox" checked={withPayload} onChange={(e) => setWithPayload(e.target.checked)} />
        Give every node the same starting content (base payload)
      </label>
      {withPayload ? (
        <div className="subsection">
          <PayloadForm type={type} value={payload} onChange={setPayload} errors={scoped(errors, 'base_payload')} labelPrefix="Base" />
        </div>
      ) : (
        <p className="field-hint">Without a base payload the nodes start unconfigured: set each one’s content later.</p>
      )}
      {formError ? <Notice kind="error">{formError}</Notice> : null}
      <FormActions submitLabel="Create batch" busy={busy} onCancel={onCancel} />
    </form>
  );
}
