import { create } from 'zustand';

/** The console lives under /console/; routes are paths below it (`/nodes/ABC`). */
export const BASE = '/console';

function current(): { path: string; search: string } {
  const raw = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) : '/';
  return { path: raw === '' ? '/' : raw, search: window.location.search };
}

interface RouterState {
  path: string;
  search: string;
  navigate(to: string, options?: { replace?: boolean }): void;
}

export const useRouter = create<RouterState>((set) => ({
  ...current(),
  navigate: (to, options) => {
    const url = `${BASE}${to}`;
    if (options?.replace) window.history.replaceState(null, '', url);
    else window.history.pushState(null, '', url);
    set(current());
    if (!options?.replace) window.scrollTo(0, 0);
  },
}));

window.addEventListener('popstate', () => useRouter.setState(current()));

export function navigate(to: string, options?: { replace?: boolean }): void {
  useRouter.getState().navigate(to, options);
}

/** Matches `/nodes/:slug` style patterns; returns the params or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/').filter(Boolean);
  const a = path.split('/').filter(Boolean);
  if (p.length !== a.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    const seg = p[i]!;
    if (seg.startsWith(':')) params[seg.slice(1)] = decodeURIComponent(a[i]!);
    else if (seg !== a[i]) return null;
  }
  return params;
}

export function useSearchParams(): URLSearchParams {
  const search = useRouter((s) => s.search);
  return new URLSearchParams(search);
}

/** Replaces the query string of the current route (filters, page) without a new history entry. */
export function setSearchParams(next: Record<string, string | number | undefined | null>): void {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(next)) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const qs = params.toString();
  navigate(`${useRouter.getState().path}${qs ? `?${qs}` : ''}`, { replace: true });
}
