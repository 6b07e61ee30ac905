import { type FormEvent, useState } from 'react';
import { Button } from '../../components/Button.tsx';
import { Field } from '../../components/Field.tsx';
import { ApiError, api } from '../../lib/api.ts';
import { type OrganizationT, useOrganizationStore } from '../../lib/organization.ts';
import { errorMessage, toast } from '../../lib/toast.ts';

/**
 * Sets the organization's scan domain (PATCH /v1/organization): the address printed on every
 * label and written on every tag from now on. Used by Settings and by the first-run prompt.
 */
export function ScanDomainForm({ organization, compact = false }: { organization: OrganizationT; compact?: boolean }) {
  const setOrganization = useOrganizationStore((s) => s.set);
  const [value, setValue] = useState(organization.scan_base_source === 'organization' ? organization.scan_base : '');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState<'save' | 'default' | null>(null);

  const save = async (scanBase: string | null) => {
    setBusy(scanBase === null ? 'default' : 'save');
    setError(undefined);
    try {
      const updated = await api.organization.setScanBase(scanBase);
      setOrganization(updated);
      setValue(scanBase === null ? '' : updated.scan_base);
      toast.success(scanBase === null ? `Scan domain: back to the instance default (${updated.scan_base})` : `Scan domain set to ${updated.scan_base}`);
    } catch (err) {
      setError(err instanceof ApiError && err.details.scan_base ? `The scan domain ${err.details.scan_base}` : errorMessage(err));
    } finally {
      setBusy(null);
    }
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!value.trim()) {
      setError('Enter the public address phones will open, such as https://w.example.com');
      return;
    }
    void save(value.trim());
  };

  return (
    <form onSubmit={submit} aria-label="Set the scan domain" className="scan-domain-form" noValidate>
      <Field
        label="Scan domain"
        error={error}
        hint={compact ? 'Such as https://w.example.com: scan URLs are <domain>/v/<slug>.' : 'An https:// (or http://) address that phones can open, such as https://w.example.com. Scan URLs are <domain>/v/<slug>; the scan path answers on any host that reaches this server.'}
      >
        {(c) => <input {...c} className="input" type="url" inputMode="url" autoComplete="url" placeholder="https://w.example.com" value={value} onChange={(e) => setValue(e.target.value)} />}
      </Field>
      <div className="button-row">
        <Button type="submit" variant="primary" busy={busy === 'save'}>
          Save scan domain
        </Button>
        {!compact && organization.scan_base_source === 'organization' ? (
          <Button busy={busy === 'default'} onClick={() => void save(null)}>
            Use the instance default
          </Button>
        ) : null}
      </div>
    </form>
  );
}
