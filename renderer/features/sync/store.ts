import { useEffect } from 'react';
import { create } from 'zustand';
import { SyncStatus } from '../../../server/schemas/sync.ts';
import { api, type SyncStatusT } from '../../lib/api.ts';
import { sharedEventStream } from '../../lib/eventStream.ts';

interface SyncState {
  status: SyncStatusT | undefined;
  error: Error | undefined;
  /** Reads GET /v1/sync/status; overlapping calls share one request. */
  refresh(): Promise<void>;
  /** After an action that answered the status (pair, sync now), or an event of the stream. */
  set(status: SyncStatusT): void;
}

let inFlight: Promise<void> | null = null;

/** The sync status, shared by the sidebar indicator and the Sync screen. */
export const useSyncStatus = create<SyncState>((set) => ({
  status: undefined,
  error: undefined,
  refresh: () =>
    (inFlight ??= api.sync
      .status()
      .then(
        (status) => set({ status, error: undefined }),
        (error: unknown) => set({ error: error instanceof Error ? error : new Error(String(error)) }),
      )
      .finally(() => (inFlight = null))),
  set: (status) => set({ status, error: undefined }),
}));

// One stream per tab, however many components show the status.
const subscribe = sharedEventStream(
  '/sync/events',
  (type, raw) => {
    if (type !== 'status') return;
    try {
      const parsed = SyncStatus.safeParse(JSON.parse(raw));
      if (parsed.success) useSyncStatus.getState().set(parsed.data);
    } catch {
      // a malformed event: the next one will do
    }
  },
  // The stream is down (server unreachable, or a server without it): one plain read says why.
  (s) => {
    if (s.error) void useSyncStatus.getState().refresh();
  },
);

/**
 * The shared status, live from GET /v1/sync/events (the server pushes it when it changes) while
 * the component is mounted: no polling, so an idle console costs its key nothing.
 */
export function useLiveSyncStatus() {
  const status = useSyncStatus((s) => s.status);
  const error = useSyncStatus((s) => s.error);
  const refresh = useSyncStatus((s) => s.refresh);
  useEffect(() => subscribe(), []);
  return { status, error, refresh };
}
