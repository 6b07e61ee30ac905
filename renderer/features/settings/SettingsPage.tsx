import { CopyButton } from '../../components/CopyButton.tsx';
import { Card, PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, Loading, Notice } from '../../components/States.tsx';
import { api } from '../../lib/api.ts';
import { useOrganization } from '../../lib/organization.ts';
import { useSession } from '../../lib/session.ts';
import { useResource } from '../../lib/useResource.ts';
import { QrStyleCard } from './QrStyleCard.tsx';
import { ScanDomainForm } from './ScanDomainForm.tsx';

export function SettingsPage() {
  const instance = useResource(() => api.instance(), []);
  const desktop = useSession((s) => s.desktop);
  return (
    <>
      <PageHeader title="Settings" description="The scan domain and QR code style of your organization, and about this Waymark instance." />
      {instance.error ? (
        <ErrorState error={instance.error} onRetry={instance.reload} title="Could not load the instance details" />
      ) : !instance.data ? (
        <Loading />
      ) : (
        <div className="detail-grid">
          <ScanDomainCard />
          <div className="grid-span-all">
            <QrStyleCard />
          </div>
          <Card title="Instance">
            <dl className="facts facts-wide">
              <dt>Server URL</dt>
              <dd>
                <code>{instance.data.server_url}</code> <CopyButton text={instance.data.server_url} />
              </dd>
              <dt>API base</dt>
              <dd>
                <code>{instance.data.api_base}</code>
              </dd>
              <dt>Data directory</dt>
              <dd>
                {instance.data.data_dir === undefined ? (
                  <span className="muted">Shown to instance-admin keys only</span>
                ) : (
                  <code className="break">{instance.data.data_dir || '—'}</code>
                )}
              </dd>
              <dt>Version</dt>
              <dd>
                Waymark {instance.data.version}
                {window.waymark ? ` (desktop app ${window.waymark.version})` : ''}
              </dd>
            </dl>
          </Card>
          <Card title="Session">
            <dl className="facts">
              <dt>Organization</dt>
              <dd>{instance.data.organization.name}</dd>
              <dt>Signed in with</dt>
              <dd>{desktop ? 'the desktop app’s session key' : `an API key (${instance.data.key.plan} plan)`}</dd>
              <dt>Key storage</dt>
              <dd>{desktop ? 'Held by the desktop app; a new key each time it starts.' : 'This browser tab only (session storage).'}</dd>
            </dl>
            <p className="field-hint">
              API reference: <code>{instance.data.api_base}/openapi.json</code>
            </p>
          </Card>
        </div>
      )}
    </>
  );
}

/** The organization's scan domain: what it is, who can open it, and the form that changes it. */
function ScanDomainCard() {
  const { organization, error, refresh } = useOrganization();
  if (error) return <ErrorState error={error} onRetry={() => void refresh()} title="Could not load the scan domain" />;
  if (!organization) return <Loading />;
  return (
    <Card title="Scan domain">
      <dl className="facts facts-wide">
        <dt>In use</dt>
        <dd>
          <code className="break">{organization.scan_base}</code>
          <p className="field-hint">
            {organization.scan_base_source === 'organization'
              ? 'Set for this organization.'
              : `The instance default (--scan-base, else the server's own address): ${organization.instance_scan_base}.`}{' '}
            Scan URLs are {organization.scan_base}/v/&lt;slug&gt;.
          </p>
        </dd>
      </dl>
      {organization.scan_base_reach === 'loopback' ? (
        <Notice kind="warning">
          This address is this computer only: no phone can open it. Printing labels and writing tags are refused (except test prints and test tags) until a scan domain is set.
        </Notice>
      ) : organization.scan_base_reach === 'lan' ? (
        <Notice kind="warning">This is a local network address: only phones on the site’s Wi-Fi can open the labels and tags made with it.</Notice>
      ) : null}
      <ScanDomainForm key={organization.scan_base} organization={organization} />
      <Notice kind="info">Labels already printed and tags already written keep the domain they were made with: a new domain applies to what is printed or written from now on.</Notice>
    </Card>
  );
}
