import { create } from 'zustand';

const STORAGE_KEY = 'waymark.apiKey';

export interface SessionState {
  /** The API key the console signs its requests with; null when signed out. */
  key: string | null;
  /** Why the last session ended (shown on the sign-in screen). */
  notice: string | null;
  /** True in the desktop app, whose key comes from the preload and cannot be signed out. */
  desktop: boolean;
  signIn(key: string): void;
  signOut(notice?: string): void;
}

function storage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

/**
 * Reads the key at start-up: the URL fragment `#key=…` (what `waymark serve` prints; the fragment
 * never reaches the server or its logs, and is removed from the address bar at once), then the
 * desktop preload, then this browser tab's session storage. The key is kept for the browser
 * session only (sessionStorage), never in localStorage or cookies.
 */
export function initialKey(): { key: string | null; desktop: boolean } {
  const hash = window.location.hash.replace(/^#/, '');
  const params = new URLSearchParams(hash);
  const fromHash = params.get('key');
  if (fromHash !== null) {
    params.delete('key');
    const rest = params.toString();
    window.history.replaceState(window.history.state, '', `${window.location.pathname}${window.location.search}${rest ? `#${rest}` : ''}`);
    const key = fromHash.trim();
    if (key) {
      storage()?.setItem(STORAGE_KEY, key);
      return { key, desktop: false };
    }
  }
  const desktopKey = window.waymark?.sessionKey;
  if (desktopKey) return { key: desktopKey, desktop: true };
  return { key: storage()?.getItem(STORAGE_KEY) ?? null, desktop: false };
}

const initial = initialKey();

export const useSession = create<SessionState>((set) => ({
  key: initial.key,
  notice: null,
  desktop: initial.desktop,
  signIn: (key) => {
    storage()?.setItem(STORAGE_KEY, key);
    set({ key, notice: null });
  },
  signOut: (notice) => {
    storage()?.removeItem(STORAGE_KEY);
    set({ key: null, notice: notice ?? null, desktop: false });
  },
}));
