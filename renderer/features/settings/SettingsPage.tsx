import { CopyButton } from '../../components/CopyButton.tsx';
import { Card, PageHeader } from '../../components/PageHeader.tsx';
import { ErrorState, Loading } from '../../components/States.tsx';
import { api } from '../../lib/api.ts';
import { useSession } from '../../lib/session.ts';
import { useResource } from '../../lib/useResource.ts';

export function SettingsPage() {
  const instance = useResource(() => api.instance(), []);
  const desktop = useSession((s) => s.desktop);
  return (
    <>
      <PageHeader title="Settings" description="About this Waymark instance." />
      {instance.error ? (
        <ErrorState error={instance.error} onRetry={instance.reload} title="Could not load the instance details" />
      ) : !instance.data ? (
        <Loading />
      ) : (
        <div className="detail-grid">
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
              <dt>Scan base</dt>
              <dd>
                <code>{instance.data.scan_base}</code>
                <p className="field-hint">Printed on every tag: scan URLs are {instance.data.scan_base}/v/&lt;slug&gt;. Set with --scan-base.</p>
              </dd>
              <dt>Data directory</dt>
              <dd>
                <code className="break">{instance.data.data_dir || '—'}</code>
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
