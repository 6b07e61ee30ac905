import { create } from 'zustand';
import { api, type SyncStatusT } from '../../lib/api.ts';

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
