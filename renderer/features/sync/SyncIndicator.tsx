import { Link } from '../../components/Link.tsx';
import { usePolledSyncStatus } from './store.ts';
import { summarize } from './summary.ts';

/** How often the shell asks GET /v1/sync/status (a cheap read; 6 requests a minute). */
const POLL_MS = 10_000;

/** The shell's compact sync state, linking to the Sync screen. */
export function SyncIndicator() {
  const { status, error } = usePolledSyncStatus(POLL_MS);
  const summary = status ? summarize(status) : error ? { tone: 'grey' as const, label: 'Sync unknown', detail: error.message } : null;
  return (
    <Link to="/sync" className={`sync-indicator sync-${summary?.tone ?? 'grey'}`} title={summary?.detail} data-testid="sync-indicator" aria-label={summary ? `Sync: ${summary.label}. ${summary.detail}` : 'Sync'}>
      <span className="sync-dot" aria-hidden="true" />
      <span>{summary?.label ?? 'Sync'}</span>
    </Link>
  );
}
