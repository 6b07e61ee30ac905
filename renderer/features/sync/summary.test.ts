import { describe, expect, it } from 'vitest';
import type { SyncStatusT } from '../../lib/api.ts';
import { summarize } from './summary.ts';

const paired: SyncStatusT = {
  mode: 'site',
  remote: 'https://w.example.com',
  paired: true,
  remote_org: { id: 'o', name: 'Acme' },
  site_id: 's',
  incarnation: 'i',
  online: true,
  last_attempt_at: null,
  last_success_at: null,
  last_error: null,
  next_attempt_at: null,
  reserve: { slugs_left: 1, blocks: 1, target_blocks: 2 },
  pending_changes: 0,
  conflicts: [],
};
const conflict = { id: 1, kind: 'block_conflict', detail: {}, detected_at: '2026-01-01T00:00:00Z', resolved_at: null };

describe('sync indicator summary', () => {
  it('green online, grey offline or standalone, amber when something waits', () => {
    expect(summarize(paired)).toMatchObject({ tone: 'green', label: 'Online' });
    expect(summarize({ ...paired, mode: 'standalone', remote: null })).toMatchObject({ tone: 'grey', label: 'Not synced' });
    expect(summarize({ ...paired, online: false, pending_changes: 3 })).toMatchObject({ tone: 'grey', label: 'Offline', detail: 'Remote unreachable · 3 pending' });
    expect(summarize({ ...paired, pending_changes: 3, conflicts: [conflict, { ...conflict, id: 2 }] })).toMatchObject({ tone: 'amber', label: '2 conflicts, 3 pending' });
    expect(summarize({ ...paired, last_error: 'Remote refused (401): Invalid or missing API key' })).toMatchObject({ tone: 'amber', label: 'Sync error' });
    expect(summarize({ ...paired, paired: false, online: null })).toMatchObject({ tone: 'grey', label: 'Pairing…' });
  });
});
