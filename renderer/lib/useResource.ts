import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { backgroundAllowed } from './rateBudget.ts';

export interface Resource<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  /** Loads again; keeps showing the previous data meanwhile. */
  reload(): void;
  /** Replaces the data locally (after a mutation that returned the new record). */
  set(data: T): void;
}

/**
 * Loads `fn` whenever `deps` change; stale answers are dropped (only the latest call lands).
 * `fn` receives an AbortSignal that fires when a newer load starts or the component unmounts.
 */
export function useResource<T>(fn: (signal: AbortSignal) => Promise<T>, deps: readonly (string | number | boolean | undefined | null)[]): Resource<T> {
  const [tick, setTick] = useState(0);
  // A fresh token for every load (deps changed or reload()); the state remembers which load it
  // holds, so "loading" is derived instead of set from inside the effect.
  const depsKey = JSON.stringify(deps);
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const token = useMemo(() => ({}), [depsKey, tick]);
  const [state, setState] = useState<{ data: T | undefined; error: Error | undefined; token: object | null }>({
    data: undefined,
    error: undefined,
    token: null,
  });

  useEffect(() => {
    const controller = new AbortController();
    fn(controller.signal).then(
      (data) => {
        if (!controller.signal.aborted) setState({ data, error: undefined, token });
      },
      (error: unknown) => {
        if (controller.signal.aborted) return;
        setState((s) => ({ ...s, error: error instanceof Error ? error : new Error(String(error)), token }));
      },
    );
    return () => controller.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [token]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  const set = useCallback((data: T) => setState({ data, error: undefined, token }), [token]);
  const loading = state.token !== token;
  return { data: state.data, error: loading ? undefined : state.error, loading, reload, set };
}

/**
 * Calls `fn` every `ms` while `active`; stops on unmount. A background refresh: a tick is skipped
 * while the key's minute budget is down to what the operator's own actions need (rateBudget.ts).
 */
export function useInterval(fn: () => void, ms: number, active: boolean): void {
  const fnRef = useRef(fn);
  useEffect(() => {
    fnRef.current = fn;
  });
  useEffect(() => {
    if (!active) return;
    const id = window.setInterval(() => {
      if (backgroundAllowed()) fnRef.current();
    }, ms);
    return () => window.clearInterval(id);
  }, [ms, active]);
}
