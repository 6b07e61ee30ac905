import { humanize } from '../lib/format.ts';

const TONES: Record<string, string> = {
  active: 'green',
  ready: 'green',
  deployed: 'green',
  delivered: 'green',
  success: 'green',
  paused: 'amber',
  pending: 'amber',
  generating: 'blue',
  writing: 'blue',
  in_production: 'blue',
  draft: 'grey',
  retired: 'grey',
  disabled: 'grey',
  lost: 'red',
  failed: 'red',
};

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${TONES[status] ?? 'grey'}`}>{humanize(status)}</span>;
}

export function Tag({ children }: { children: string }) {
  return <span className="tag">{children}</span>;
}
