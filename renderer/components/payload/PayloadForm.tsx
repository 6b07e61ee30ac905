import type { FunctionType } from '../../../server/schemas/common.ts';
import { Button } from '../Button.tsx';
import { Field } from '../Field.tsx';
import { PAYLOAD_FORMS, type FieldDef, type LinkValue } from './fields.ts';

export interface PayloadFormProps {
  type: FunctionType;
  value: Record<string, unknown>;
  onChange(value: Record<string, unknown>): void;
  /** Errors keyed by payload field (`url`, `links.0.url`); the server's `payload.*` details, unprefixed. */
  errors: Record<string, string>;
  /** Fields a template locks: shown read-only. */
  locked?: readonly string[];
  /** Prefix for labels so two payload forms on one page stay distinct (e.g. "Rule"). */
  labelPrefix?: string;
}

export function PayloadForm({ type, value, onChange, errors, locked = [], labelPrefix }: PayloadFormProps) {
  const set = (name: string, v: unknown) => onChange({ ...value, [name]: v });
  const label = (l: string) => (labelPrefix ? `${labelPrefix} ${l.charAt(0).toLowerCase()}${l.slice(1)}` : l);
  return (
    <div className="payload-form">
      {PAYLOAD_FORMS[type].map((def) =>
        def.when && !def.when(value) ? null : (
          <PayloadField key={def.name} def={def} value={value[def.name]} onChange={(v) => set(def.name, v)} errors={errors} locked={locked.includes(def.name)} label={label(def.label)} />
        ),
      )}
      {errors._ ? (
        <p className="field-error" role="alert">
          Payload {errors._}
        </p>
      ) : null}
    </div>
  );
}

function PayloadField({ def, value, onChange, errors, locked, label }: { def: FieldDef; value: unknown; onChange(v: unknown): void; errors: Record<string, string>; locked: boolean; label: string }) {
  const error = errors[def.name];
  const text = typeof value === 'string' ? value : '';
  const hint = locked ? 'Locked by the template.' : def.hint;
  if (def.kind === 'links') {
    return <LinksEditor label={label} value={Array.isArray(value) ? (value as LinkValue[]) : []} onChange={onChange} errors={errors} name={def.name} locked={locked} />;
  }
  return (
    <Field label={label} error={error ? `${label} ${error}` : undefined} hint={hint} required={def.required ?? false}>
      {(control) => {
        if (def.kind === 'textarea') {
          return <textarea {...control} className="input" rows={3} value={text} readOnly={locked} onChange={(e) => onChange(e.target.value)} />;
        }
        if (def.kind === 'select') {
          return (
            <select {...control} className="input" value={text} disabled={locked} onChange={(e) => onChange(e.target.value)}>
              {def.required ? null : <option value="">(default)</option>}
              {(def.options ?? []).map((o) => (
                <option key={o} value={o}>
                  {o}
                </option>
              ))}
            </select>
          );
        }
        if (def.kind === 'color') {
          return (
            <div className="color-row">
              <input
                type="color"
                aria-label={`${label} picker`}
                value={/^#[0-9a-f]{6}$/i.test(text) ? text : '#2563eb'}
                disabled={locked}
                onChange={(e) => onChange(e.target.value.toUpperCase())}
              />
              <input {...control} className="input" type="text" value={text} placeholder="#2563EB" readOnly={locked} onChange={(e) => onChange(e.target.value)} />
            </div>
          );
        }
        return (
          <input
            {...control}
            className="input"
            type={def.kind === 'password' ? 'text' : def.kind}
            autoComplete="off"
            spellCheck={def.kind === 'text'}
            value={text}
            placeholder={def.placeholder}
            readOnly={locked}
            onChange={(e) => onChange(e.target.value)}
          />
        );
      }}
    </Field>
  );
}

function LinksEditor({ label, name, value, onChange, errors, locked }: { label: string; name: string; value: LinkValue[]; onChange(v: LinkValue[]): void; errors: Record<string, string>; locked: boolean }) {
  const update = (i: number, patch: Partial<LinkValue>) => onChange(value.map((l, j) => (j === i ? { ...l, ...patch } : l)));
  return (
    <fieldset className="fieldset links-editor">
      <legend className="field-label">{label}</legend>
      {value.length === 0 ? <p className="field-hint">No links yet.</p> : null}
      {value.map((link, i) => (
        <div className="links-row" key={i}>
          <Field label={`Link ${i + 1} label`} error={errors[`${name}.${i}.label`] ? `Label ${errors[`${name}.${i}.label`]}` : undefined}>
            {(control) => <input {...control} className="input" value={link.label} readOnly={locked} onChange={(e) => update(i, { label: e.target.value })} />}
          </Field>
          <Field label={`Link ${i + 1} URL`} error={errors[`${name}.${i}.url`] ? `URL ${errors[`${name}.${i}.url`]}` : undefined}>
            {(control) => <input {...control} className="input" type="url" value={link.url} placeholder="https://" readOnly={locked} onChange={(e) => update(i, { url: e.target.value })} />}
          </Field>
          {locked ? null : (
            <Button size="sm" variant="ghost" aria-label={`Remove link ${i + 1}`} onClick={() => onChange(value.filter((_, j) => j !== i))}>
              Remove
            </Button>
          )}
        </div>
      ))}
      {errors[name] ? (
        <p className="field-error" role="alert">
          {label} {errors[name]}
        </p>
      ) : null}
      {locked || value.length >= 20 ? null : (
        <Button size="sm" onClick={() => onChange([...value, { label: '', url: '' }])}>
          Add link
        </Button>
      )}
    </fieldset>
  );
}
