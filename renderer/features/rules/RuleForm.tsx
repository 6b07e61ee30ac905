import { type FormEvent, useMemo, useState } from 'react';
import { FUNCTION_TYPES, type FunctionType } from '../../../server/schemas/common.ts';
import { payloadSchemas } from '../../../server/schemas/payloads.ts';
import { CreateRuleBody, DEVICES, OPERATING_SYSTEMS, RULE_TYPES, type RuleType, conditionSchemas } from '../../../server/schemas/rules.ts';
import { Button, FormActions } from '../../components/Button.tsx';
import { Field, FieldSet } from '../../components/Field.tsx';
import { Notice } from '../../components/States.tsx';
import { PayloadForm } from '../../components/payload/PayloadForm.tsx';
import { cleanPayload } from '../../components/payload/fields.ts';
import type { RuleT } from '../../lib/api.ts';
import { countries, localTimeZone, timeZones } from '../../lib/countries.ts';
import { typeLabel } from '../../lib/format.ts';
import { type FieldErrors, scoped, validate } from '../../lib/validation.ts';
import { useFormSubmit } from '../../lib/useFormSubmit.ts';
import { DAY_NAMES, RULE_TYPE_LABELS, type WindowValue, cleanConditions, defaultConditions } from './conditions.ts';
import { WeekGrid } from './WeekGrid.tsx';

export interface RuleDraft {
  rule_type: RuleType;
  conditions: Record<string, unknown>;
  function_type: FunctionType;
  payload: Record<string, unknown>;
  priority: number;
  enabled: boolean;
}

export interface RuleFormProps {
  initial?: RuleT | undefined;
  /** Sum of the node's other traffic_split weights (for the remainder). */
  otherSplitWeight: number;
  onSubmit(draft: RuleDraft): Promise<void>;
  onCancel(): void;
}

export function RuleForm({ initial, otherSplitWeight, onSubmit, onCancel }: RuleFormProps) {
  const tz = localTimeZone();
  const [ruleType, setRuleType] = useState<RuleType>(initial?.rule_type ?? 'time_based');
  const [conditions, setConditions] = useState<Record<string, unknown>>(initial?.conditions ?? defaultConditions('time_based', tz));
  const [functionType, setFunctionType] = useState<FunctionType>(initial?.function_type ?? 'redirect');
  const [payload, setPayload] = useState<Record<string, unknown>>(initial?.payload ?? {});
  const [priority, setPriority] = useState(String(initial?.priority ?? 0));
  const [enabled, setEnabled] = useState(initial?.enabled ?? true);
  const { errors, setErrors, formRef, formError, busy, send } = useFormSubmit({ refused: 'The server did not accept the rule', focusFirst: true });

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const draft: RuleDraft = {
      rule_type: ruleType,
      conditions: cleanConditions(ruleType, conditions),
      function_type: functionType,
      payload: cleanPayload(functionType, payload),
      priority: Number(priority),
      enabled,
    };
    const checks = [
      validate(CreateRuleBody, draft),
      validate(conditionSchemas[ruleType], draft.conditions, 'conditions'),
      validate(payloadSchemas[functionType], draft.payload, 'payload'),
    ];
    await send(Object.assign({}, ...checks.map((c) => (c.ok ? {} : c.errors))) as FieldErrors, () => onSubmit(draft));
  };

  const cErrors = scoped(errors, 'conditions');
  return (
    <form ref={formRef} onSubmit={submit} noValidate className="rule-form" aria-label={initial ? 'Edit rule' : 'New rule'}>
      <FieldSet legend="When">
        <div className="segmented" role="radiogroup" aria-label="Rule kind">
          {RULE_TYPES.map((t) => (
            <label key={t} className={`segment${t === ruleType ? ' selected' : ''}`}>
              <input
                type="radio"
                name="rule_type"
                value={t}
                checked={t === ruleType}
                disabled={Boolean(initial)}
                onChange={() => {
                  setRuleType(t);
                  setConditions(defaultConditions(t, tz));
                  setErrors({});
                }}
              />
              {RULE_TYPE_LABELS[t]}
            </label>
          ))}
        </div>
        {ruleType === 'time_based' ? <TimeConditionsEditor value={conditions} onChange={setConditions} errors={cErrors} /> : null}
        {ruleType === 'geo_based' ? <CountryPicker value={(conditions.countries as string[]) ?? []} onChange={(countries) => setConditions({ countries })} error={cErrors.countries ?? cErrors._} /> : null}
        {ruleType === 'device_based' ? <DeviceEditor value={conditions} onChange={setConditions} errors={cErrors} /> : null}
        {ruleType === 'traffic_split' ? (
          <SplitEditor weight={conditions.weight as number | string} other={otherSplitWeight} onChange={(weight) => setConditions({ weight })} error={cErrors.weight ?? cErrors._} />
        ) : null}
      </FieldSet>
      <FieldSet legend="Serve">
        <Field label="Rule serves" error={errors.function_type ? `Type ${errors.function_type}` : undefined}>
          {(c) => (
            <select
              {...c}
              className="input"
              value={functionType}
              onChange={(e) => {
                const t = e.target.value as FunctionType;
                setFunctionType(t);
                setPayload(t === 'action' ? { action_type: 'whatsapp' } : {});
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
        <PayloadForm type={functionType} value={payload} onChange={setPayload} errors={scoped(errors, 'payload')} />
      </FieldSet>
      <div className="inline-fields">
        <Field label="Priority" hint="Lower runs first." error={errors.priority ? `Priority ${errors.priority}` : undefined}>
          {(c) => <input {...c} className="input input-narrow" type="number" min={0} step={1} value={priority} onChange={(e) => setPriority(e.target.value)} />}
        </Field>
        <label className="checkbox">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
          Enabled
        </label>
      </div>
      {formError ? <Notice kind="error">{formError}</Notice> : null}
      <FormActions submitLabel={initial ? 'Save rule' : 'Add rule'} busy={busy} onCancel={onCancel} />
    </form>
  );
}

function TimeConditionsEditor({ value, onChange, errors }: { value: Record<string, unknown>; onChange(v: Record<string, unknown>): void; errors: FieldErrors }) {
  const zones = useMemo(() => timeZones(), []);
  const timezone = typeof value.timezone === 'string' ? value.timezone : 'UTC';
  const windows = (value.windows as WindowValue[] | undefined) ?? [];
  const setWindows = (w: WindowValue[]) => onChange({ ...value, windows: w });
  const update = (i: number, patch: Partial<WindowValue>) => setWindows(windows.map((w, j) => (j === i ? { ...w, ...patch } : w)));
  return (
    <div className="time-editor">
      <Field label="Time zone" error={errors.timezone ? `Time zone ${errors.timezone}` : undefined}>
        {(c) => (
          <select {...c} className="input" value={timezone} onChange={(e) => onChange({ ...value, timezone: e.target.value })}>
            {zones.includes(timezone) ? null : <option value={timezone}>{timezone}</option>}
            {zones.map((z) => (
              <option key={z} value={z}>
                {z.replace(/_/g, ' ')}
              </option>
            ))}
          </select>
        )}
      </Field>
      {windows.map((w, i) => (
        <fieldset className="window-row" key={i}>
          <legend className="field-label">Window {i + 1}</legend>
          <div className="day-toggles" role="group" aria-label={`Window ${i + 1} days`}>
            {DAY_NAMES.map((name, d) => {
              const day = d + 1;
              const on = w.days.includes(day);
              return (
                <button
                  key={day}
                  type="button"
                  className={`day-toggle${on ? ' on' : ''}`}
                  aria-pressed={on}
                  aria-label={`${name} in window ${i + 1}`}
                  onClick={() => update(i, { days: on ? w.days.filter((x) => x !== day) : [...w.days, day].sort() })}
                >
                  {name}
                </button>
              );
            })}
          </div>
          <div className="inline-fields">
            <Field label={`Window ${i + 1} start`} error={errors[`windows.${i}.start_time`]}>
              {(c) => <input {...c} className="input input-narrow" type="time" value={w.start_time} onChange={(e) => update(i, { start_time: e.target.value })} />}
            </Field>
            <Field label={`Window ${i + 1} end`} error={errors[`windows.${i}.end_time`]} hint={w.end_time <= w.start_time ? 'Ends the next day.' : undefined}>
              {(c) => <input {...c} className="input input-narrow" type="time" value={w.end_time} onChange={(e) => update(i, { end_time: e.target.value })} />}
            </Field>
            {windows.length > 1 ? (
              <Button size="sm" variant="ghost" onClick={() => setWindows(windows.filter((_, j) => j !== i))}>
                Remove window {i + 1}
              </Button>
            ) : null}
          </div>
          {errors[`windows.${i}.days`] ? <p className="field-error">Days {errors[`windows.${i}.days`]}</p> : null}
        </fieldset>
      ))}
      {errors.windows ? <p className="field-error">Windows {errors.windows}</p> : null}
      <Button size="sm" onClick={() => setWindows([...windows, { days: [6, 7], start_time: '10:00', end_time: '16:00' }])}>
        Add window
      </Button>
      <WeekGrid windows={windows} timezone={timezone} />
    </div>
  );
}

function CountryPicker({ value, onChange, error }: { value: string[]; onChange(v: string[]): void; error?: string | undefined }) {
  const [filter, setFilter] = useState('');
  const all = useMemo(() => countries(), []);
  const f = filter.trim().toLowerCase();
  const shown = f ? all.filter((c) => c.name.toLowerCase().includes(f) || c.code.toLowerCase() === f) : all;
  const toggle = (code: string) => onChange(value.includes(code) ? value.filter((c) => c !== code) : [...value, code]);
  return (
    <div className="country-picker">
      <div className="chips" aria-label="Selected countries">
        {value.length === 0 ? <span className="field-hint">No country selected.</span> : null}
        {value.map((code) => (
          <span key={code} className="chip">
            {all.find((c) => c.code === code)?.name ?? code} ({code})
            <button type="button" className="chip-remove" aria-label={`Remove ${code}`} onClick={() => toggle(code)}>
              ×
            </button>
          </span>
        ))}
      </div>
      <Field label="Find a country" error={error ? `Countries ${error}` : undefined}>
        {(c) => <input {...c} className="input" type="search" value={filter} placeholder="Name or code" onChange={(e) => setFilter(e.target.value)} />}
      </Field>
      <div className="country-list" role="group" aria-label="Countries">
        {shown.map((c) => (
          <label key={c.code} className="checkbox">
            <input type="checkbox" checked={value.includes(c.code)} onChange={() => toggle(c.code)} />
            {c.name} <span className="muted">{c.code}</span>
          </label>
        ))}
        {shown.length === 0 ? <p className="field-hint">No country matches.</p> : null}
      </div>
    </div>
  );
}

function DeviceEditor({ value, onChange, errors }: { value: Record<string, unknown>; onChange(v: Record<string, unknown>): void; errors: FieldErrors }) {
  const devices = (value.devices as string[] | undefined) ?? [];
  const os = (value.os as string[] | undefined) ?? [];
  const toggle = (list: string[], item: string) => (list.includes(item) ? list.filter((x) => x !== item) : [...list, item]);
  const names: Record<string, string> = { ios: 'iOS', android: 'Android', windows: 'Windows', macos: 'macOS', linux: 'Linux', mobile: 'Mobile', tablet: 'Tablet', desktop: 'Desktop' };
  return (
    <div className="device-editor">
      <FieldSet legend="Devices" error={errors.devices}>
        <div className="checkbox-row">
          {DEVICES.map((d) => (
            <label key={d} className="checkbox">
              <input type="checkbox" checked={devices.includes(d)} onChange={() => onChange({ ...value, devices: toggle(devices, d) })} />
              {names[d]}
            </label>
          ))}
        </div>
      </FieldSet>
      <FieldSet legend="Operating systems" error={errors.os}>
        <div className="checkbox-row">
          {OPERATING_SYSTEMS.map((o) => (
            <label key={o} className="checkbox">
              <input type="checkbox" checked={os.includes(o)} onChange={() => onChange({ ...value, os: toggle(os, o) })} />
              {names[o]}
            </label>
          ))}
        </div>
      </FieldSet>
      <p className="field-hint">Matches when the device and the OS both match (an empty group matches any).</p>
      {errors._ ? <p className="field-error" role="alert">Conditions {errors._}</p> : null}
    </div>
  );
}

function SplitEditor({ weight, other, onChange, error }: { weight: number | string; other: number; onChange(v: number | string): void; error?: string | undefined }) {
  const w = typeof weight === 'number' ? weight : Number(weight);
  const valid = Number.isInteger(w) && w >= 1 && w <= 100;
  const remainder = 100 - other - (valid ? w : 0);
  return (
    <div className="split-editor">
      <Field label="Weight (%)" error={error ? `Weight ${error}` : undefined} hint="Share of visitors this rule serves; one visitor sees one variant all day.">
        {(c) => (
          <input
            {...c}
            className="input input-narrow"
            type="number"
            min={1}
            max={100}
            step={1}
            value={String(weight)}
            onChange={(e) => onChange(e.target.value === '' ? '' : Number(e.target.value))}
          />
        )}
      </Field>
      <div className="split-bar" aria-hidden="true">
        <span className="split-other" style={{ width: `${Math.min(100, other)}%` }} />
        <span className="split-this" style={{ width: `${Math.max(0, Math.min(100 - other, valid ? w : 0))}%` }} />
      </div>
      <p className={`split-remainder${remainder < 0 ? ' over' : ''}`} data-testid="split-remainder">
        Other split rules: {other}% · this rule: {valid ? w : '—'}% · remainder (the node’s own payload): {remainder}%
        {remainder < 0 ? ' — over 100%' : ''}
      </p>
    </div>
  );
}
