import { type FormEvent, useState } from 'react';
import { UpdateNodeBody } from '../../../server/schemas/nodes.ts';
import { FormActions } from '../../components/Button.tsx';
import { Field } from '../../components/Field.tsx';
import { Card } from '../../components/PageHeader.tsx';
import { Notice } from '../../components/States.tsx';
import { api, type NodeT } from '../../lib/api.ts';
import { toast } from '../../lib/toast.ts';
import { useFormSubmit } from '../../lib/useFormSubmit.ts';
import { validate } from '../../lib/validation.ts';

/** An ISO instant as a `datetime-local` value in the browser's zone (minutes), or ''. */
function toLocalInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** Expiry, scan limit, password and what comes after (docs/api.md "Node limits"), saved with one PATCH. */
export function NodeLimits({ node, onSaved }: { node: NodeT; onSaved(): void }) {
  const [expires, setExpires] = useState(toLocalInput(node.expires_at));
  const [maxScans, setMaxScans] = useState(node.max_scans === null ? '' : String(node.max_scans));
  const [afterType, setAfterType] = useState<'gone' | 'redirect'>(node.after_limit.type);
  const [afterUrl, setAfterUrl] = useState(node.after_limit.type === 'redirect' ? node.after_limit.url : '');
  const [password, setPassword] = useState('');
  const [removePassword, setRemovePassword] = useState(false);
  const { errors, formRef, formError, setFormError, busy, send } = useFormSubmit({ refused: 'The server did not accept the change' });

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setFormError(undefined);
    const body: Record<string, unknown> = {};
    const expiresAt = expires === '' ? null : new Date(expires).toISOString();
    if (expiresAt !== node.expires_at) body.expires_at = expiresAt;
    const max = maxScans.trim() === '' ? null : Number(maxScans);
    if (max !== node.max_scans) body.max_scans = max;
    const after = afterType === 'gone' ? { type: 'gone' } : { type: 'redirect', url: afterUrl.trim() };
    if (JSON.stringify(after) !== JSON.stringify(node.after_limit)) body.after_limit = after;
    if (removePassword) body.password = null;
    else if (password !== '') body.password = password;
    if (Object.keys(body).length === 0) {
      toast.info('Nothing to save');
      return;
    }
    const checked = validate(UpdateNodeBody, body);
    await send(checked.ok ? {} : checked.errors, async () => {
      await api.nodes.update(node.slug, body);
      setPassword('');
      setRemovePassword(false);
      toast.success('Limits saved');
      onSaved();
    });
  };

  return (
    <Card title="Limits">
      <form ref={formRef} onSubmit={submit} noValidate aria-label="Node limits">
        <Field label="Expires" error={errors.expires_at ? `Expiry: ${errors.expires_at}` : undefined} hint="Leave empty for no expiry. Your local time.">
          {(c) => <input {...c} type="datetime-local" className="input" value={expires} onChange={(e) => setExpires(e.target.value)} />}
        </Field>
        <Field label="Maximum scans" error={errors.max_scans ? `Maximum scans ${errors.max_scans}` : undefined} hint="Leave empty for no limit. Bots and link previews do not count.">
          {(c) => <input {...c} type="number" min={1} step={1} inputMode="numeric" className="input" value={maxScans} onChange={(e) => setMaxScans(e.target.value)} />}
        </Field>
        <Field label="After the limit or expiry">
          {(c) => (
            <select {...c} className="input" value={afterType} onChange={(e) => setAfterType(e.target.value as 'gone' | 'redirect')}>
              <option value="gone">Show “no longer available” (410)</option>
              <option value="redirect">Redirect to another address</option>
            </select>
          )}
        </Field>
        {afterType === 'redirect' ? (
          <Field label="Fallback URL" required error={errors['after_limit.url'] ? `Fallback URL ${errors['after_limit.url']}` : undefined}>
            {(c) => <input {...c} type="url" className="input" value={afterUrl} onChange={(e) => setAfterUrl(e.target.value)} placeholder="https://example.com/sold-out" />}
          </Field>
        ) : null}
        <Field
          label={node.password_protected ? 'New scan password' : 'Scan password'}
          error={errors.password ? `Scan password ${errors.password}` : undefined}
          hint={node.password_protected ? 'A password is set (it is never shown). Type a new one to replace it.' : 'Scans show a password page first. Leave empty for none.'}
        >
          {(c) => (
            <input {...c} type="password" autoComplete="new-password" className="input" value={password} disabled={removePassword} onChange={(e) => setPassword(e.target.value)} />
          )}
        </Field>
        {node.password_protected ? (
          <label className="checkbox">
            <input type="checkbox" checked={removePassword} onChange={(e) => setRemovePassword(e.target.checked)} /> Remove the scan password
          </label>
        ) : null}
        {formError ? <Notice kind="error">{formError}</Notice> : null}
        <FormActions submitLabel="Save limits" busy={busy} />
      </form>
    </Card>
  );
}
