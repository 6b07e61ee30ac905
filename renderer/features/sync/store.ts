import { useEffect } from 'react';
import { create } from 'zustand';
import { api, type SyncStatusT } from '../../lib/api.ts';
import { useInterval } from '../../lib/useResource.ts';

interface SyncState {
  status: SyncStatusT | undefined;
  error: Error | undefined;
  /** Reads GET /v1/sync/status; overlapping calls share one request. */
  refresh(): Promise<void>;
  /** After an action that answered the status (pair, sync now). */
  set(status: SyncStatusT): void;
}

let inFlight: Promise<void> | null = null;

/** The sync status, shared by the sidebar indicator (which polls it) and the Sync screen. */
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

/** The shared status, read now and every `ms` while the component is mounted. */
export function usePolledSyncStatus(ms: number) {
  const status = useSyncStatus((s) => s.status);
  const error = useSyncStatus((s) => s.error);
  const refresh = useSyncStatus((s) => s.refresh);
  useEffect(() => void refresh(), [refresh]);
  useInterval(() => void refresh(), ms, true);
  return { status, error, refresh };
}
