import { create } from 'zustand';

export interface Toast {
  id: number;
  kind: 'success' | 'error' | 'info';
  message: string;
}

interface ToastState {
  toasts: Toast[];
  push(kind: Toast['kind'], message: string): void;
  dismiss(id: number): void;
}

let nextId = 1;

export const useToasts = create<ToastState>((set, get) => ({
  toasts: [],
  push: (kind, message) => {
    const id = nextId++;
    set({ toasts: [...get().toasts, { id, kind, message }].slice(-4) });
    window.setTimeout(() => get().dismiss(id), kind === 'error' ? 8000 : 4000);
  },
  dismiss: (id) => set({ toasts: get().toasts.filter((t) => t.id !== id) }),
}));

/** The message to show for anything a failed call threw (ApiError, TypeError from fetch, …). */
export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export const toast = {
  success: (m: string) => useToasts.getState().push('success', m),
  error: (m: string) => useToasts.getState().push('error', m),
  /** An error toast for whatever a failed call threw. */
  fromError: (err: unknown) => useToasts.getState().push('error', errorMessage(err)),
  info: (m: string) => useToasts.getState().push('info', m),
};
