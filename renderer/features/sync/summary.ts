import type { SyncStatusT } from '../../lib/api.ts';

export type SyncTone = 'green' | 'grey' | 'amber';

/** One word and a colour for the indicator: green online, grey offline or standalone, amber when something waits. */
export function summarize(s: SyncStatusT): { tone: SyncTone; label: string; detail: string } {
  if (s.mode === 'standalone') return { tone: 'grey', label: 'Not synced', detail: 'Standalone: not paired with a remote' };
  const waiting: string[] = [];
  if (s.conflicts.length > 0) waiting.push(`${s.conflicts.length} conflict${s.conflicts.length === 1 ? '' : 's'}`);
  if (s.pending_changes > 0) waiting.push(`${s.pending_changes} pending`);
  if (s.online === false) return { tone: 'grey', label: 'Offline', detail: ['Remote unreachable', ...waiting].join(' · ') };
  if (waiting.length > 0) return { tone: 'amber', label: waiting.join(', '), detail: `Synced with ${s.remote ?? 'the remote'}; ${waiting.join(', ')}` };
  if (s.last_error) return { tone: 'amber', label: 'Sync error', detail: s.last_error };
  if (!s.paired || s.online === null) return { tone: 'grey', label: 'Pairing…', detail: `Waiting for ${s.remote ?? 'the remote'}` };
  return { tone: 'green', label: 'Online', detail: `Synced with ${s.remote ?? 'the remote'}` };
}
