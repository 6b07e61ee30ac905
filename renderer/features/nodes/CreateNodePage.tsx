import { type FormEvent, useMemo, useState } from 'react';
import { FUNCTION_TYPES, type FunctionType } from '../../../server/schemas/common.ts';
import { CreateNodeBody } from '../../../server/schemas/nodes.ts';
import { payloadSchemas } from '../../../server/schemas/payloads.ts';
import { FormActions } from '../../components/Button.tsx';
import { Field, FieldSet } from '../../components/Field.tsx';
import { Link } from '../../components/Link.tsx';
import { Card, PageHeader } from '../../components/PageHeader.tsx';
import { Notice } from '../../components/States.tsx';
import { PayloadForm } from '../../components/payload/PayloadForm.tsx';
import { cleanPayload } from '../../components/payload/fields.ts';
import { api, type TemplateT } from '../../lib/api.ts';
import { typeLabel } from '../../lib/format.ts';
import { navigate, setSearchParams, useSearchParams } from '../../lib/router.ts';
import { toast } from '../../lib/toast.ts';
import { useResource } from '../../lib/useResource.ts';
import { useFormSubmit } from '../../lib/useFormSubmit.ts';
import { scoped, validate } from '../../lib/validation.ts';

const TYPE_HINTS: Record<FunctionType, string> = {
  redirect: 'Send the visitor to a web address.',
  vcard: 'A contact card the phone can save.',
  wifi: 'Join a Wi-Fi network.',
  action: 'WhatsApp, Telegram, SMS, call or email.',
  microsite: 'A small mobile page with links.',
  digital_card: 'A business card page.',
};

function initialPayload(type: FunctionType): Record<string, unknown> {
  if (type === 'action') return { action_type: 'whatsapp' };
  return {};
}

export function CreateNodePage() {
  const params = useSearchParams();
  const type = (FUNCTION_TYPES as readonly string[]).includes(params.get('type') ?? '') ? (params.get('type') as FunctionType) : 'redirect';
  const [label, setLabel] = useState('');
  const [draft, setDraft] = useState(false);
  const [templateId, setTemplateId] = useState('');
  const [payloads, setPayloads] = useState<Partial<Record<FunctionType, Record<string, unknown>>>>({});
  const { errors, setErrors, formRef, formError, setFormError, busy, send } = useFormSubmit({ refused: 'The server did not accept the node' });
  const templates = useResource(() => api.templates.list(100), []);

  const forType = useMemo(() => (templates.data?.data ?? []).filter((t) => t.function_type === type), [templates.data, type]);
  const template: TemplateT | undefined = forType.find((t) => t.id === templateId);
  const payload = payloads[type] ?? initialPayload(type);
  const shown = template ? { ...payload, ...Object.fromEntries(template.locked_fields.map((f) => [f, template.payload[f]])) } : payload;

  const chooseType = (t: FunctionType) => {
    setErrors({});
    setFormError(undefined);
    setTemplateId('');
    setSearchParams({ type: t });
  };

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const own = cleanPayload(type, shown);
    // A template gives defaults; the merged result must be valid like the server checks it.
    const merged = template ? { ...template.payload, ...own } : own;
    const sent = template ? Object.fromEntries(Object.entries(own).filter(([k]) => !template.locked_fields.includes(k))) : own;
    const body = { label, function_type: type, payload: sent, ...(template ? { template_id: template.id } : {}), ...(draft ? { status: 'draft' as const } : {}) };
    const checkBody = validate(CreateNodeBody, body);
    const checkPayload = validate(payloadSchemas[type], merged, 'payload');
    await send({ ...(checkBody.ok ? {} : checkBody.errors), ...(checkPayload.ok ? {} : checkPayload.errors) }, async () => {
      const created = await api.nodes.create(body);
      toast.success(`Node ${created.slug} created`);
      navigate(`/nodes/${created.slug}`);
    });
  };

  return (
    <>
      <PageHeader title="New node" back={<Link to="/nodes">← Nodes</Link>} description="Choose what a scan does, then fill in its details." />
      <form ref={formRef} onSubmit={submit} noValidate className="form-grid" aria-label="New node">
        <Card title="Type">
          <FieldSet legend="What does a scan do?">
            <div className="type-picker">
              {FUNCTION_TYPES.map((t) => (
                <label key={t} className={`type-option${t === type ? ' selected' : ''}`}>
                  <input type="radio" name="function_type" value={t} checked={t === type} onChange={() => chooseType(t)} />
                  <span className="type-option-title">{typeLabel(t)}</span>
                  <span className="type-option-hint">{TYPE_HINTS[t]}</span>
                </label>
              ))}
            </div>
          </FieldSet>
        </Card>
        <Card title={`${typeLabel(type)} details`}>
          <Field label="Label" required error={errors.label ? `Label ${errors.label}` : undefined} hint="An internal name, e.g. where the tag is.">
            {(c) => <input {...c} className="input" value={label} onChange={(e) => setLabel(e.target.value)} />}
          </Field>
          <Field label="Template" error={errors.template_id ? `Template: ${errors.template_id}` : undefined} hint={forType.length === 0 ? `No ${typeLabel(type)} templates.` : 'Defaults and locked fields come from the template.'}>
            {(c) => (
              <select {...c} className="input" value={templateId} onChange={(e) => setTemplateId(e.target.value)} disabled={forType.length === 0 && !templateId}>
                <option value="">No template</option>
                {forType.map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <PayloadForm
            type={type}
            value={shown}
            onChange={(v) => setPayloads({ ...payloads, [type]: v })}
            errors={scoped(errors, 'payload')}
            locked={template?.locked_fields ?? []}
          />
          <label className="checkbox">
            <input type="checkbox" checked={draft} onChange={(e) => setDraft(e.target.checked)} />
            Save as draft (not served until activated)
          </label>
        </Card>
        {formError ? <Notice kind="error">{formError}</Notice> : null}
        <FormActions submitLabel="Create node" busy={busy} onCancel={() => navigate('/nodes')} />
      </form>
    </>
  );
}
