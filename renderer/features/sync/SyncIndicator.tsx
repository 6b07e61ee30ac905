import { Link } from '../../components/Link.tsx';
import { useLiveSyncStatus } from './store.ts';
import { summarize } from './summary.ts';

/** The shell's compact sync state, linking to the Sync screen. */
export function SyncIndicator() {
  const { status, error } = useLiveSyncStatus();
  const summary = status ? summarize(status) : error ? { tone: 'grey' as const, label: 'Sync unknown', detail: error.message } : null;
  return (
    <Link to="/sync" className={`sync-indicator sync-${summary?.tone ?? 'grey'}`} title={summary?.detail} data-testid="sync-indicator" aria-label={summary ? `Sync: ${summary.label}. ${summary.detail}` : 'Sync'}>
      <span className="sync-dot" aria-hidden="true" />
      <span>{summary?.label ?? 'Sync'}</span>
    </Link>
  );
}
