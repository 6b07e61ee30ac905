/**
 * Server-sent event streams of the API (GET /v1/nfc/events, /v1/sync/events), read with fetch()
 * because EventSource cannot send the Authorization header. One request stays open instead of
 * a poll every few seconds, so an idle console spends nothing of its key's rate budget.
 */
import { ApiError, buildUrl } from './api.ts';
import { useSession } from './session.ts';
import { parseEventStream } from './sse.ts';

/**
 * Reads `path` until the signal aborts or the server ends the stream (then it resolves);
 * rejects with an ApiError for an HTTP refusal (403, 404 …) or an unreachable server.
 */
export async function readEventStream(path: string, onEvent: (type: string, data: string) => void, signal: AbortSignal): Promise<void> {
  const key = useSession.getState().key;
  let res: Response;
  try {
    res = await fetch(buildUrl(path), {
      headers: { accept: 'text/event-stream', ...(key ? { authorization: `Bearer ${key}` } : {}) },
      cache: 'no-store',
      credentials: 'omit',
      signal,
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') return;
    throw new ApiError(0, 'Cannot reach the Waymark server. Check that it is running and reachable.');
  }
  if (!res.ok || !res.body) {
    let message = `${res.status} ${res.statusText}`;
    try {
      const j = (await res.json()) as { error?: string };
      if (j.error) message = j.error;
    } catch {
      // keep the status line
    }
    if (res.status === 401) useSession.getState().signOut('The server did not accept the API key (revoked or mistyped). Sign in again.');
    throw new ApiError(res.status, message);
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer = parseEventStream(buffer + value, onEvent);
    }
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') return;
    throw err;
  } finally {
    reader.releaseLock();
  }
}

export interface StreamState {
  connected: boolean;
  /** Why the stream is not open (403 not local, 404 not on this server, server down), else null. */
  error: ApiError | null;
}

/**
 * Follows `path` until the returned stop() is called, reconnecting after a dropped stream (1 s
 * after a clean end, 2 s after an error, 15 s after a 403/404, which will not change soon).
 */
export function followEventStream(path: string, onEvent: (type: string, data: string) => void, onState: (s: StreamState) => void): () => void {
  const abort = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let connected = false;
  const connect = (delay: number) => {
    timer = setTimeout(() => {
      if (abort.signal.aborted) return;
      readEventStream(
        path,
        (type, data) => {
          if (!connected) {
            connected = true;
            onState({ connected: true, error: null });
          }
          onEvent(type, data);
        },
        abort.signal,
      )
        .then(() => {
          if (abort.signal.aborted) return;
          connected = false;
          onState({ connected: false, error: null });
          connect(1000);
        })
        .catch((err: unknown) => {
          if (abort.signal.aborted) return;
          const error = err instanceof ApiError ? err : new ApiError(0, err instanceof Error ? err.message : String(err));
          connected = false;
          onState({ connected: false, error });
          connect(error.status === 403 || error.status === 404 ? 15_000 : 2000);
        });
    }, delay);
  };
  connect(0);
  return () => {
    abort.abort();
    clearTimeout(timer);
  };
}

/**
 * One stream of `path` per tab, however many components follow it: the returned function
 * subscribes (the first subscriber opens the stream) and gives back the unsubscribe (the last
 * one closes it, and `onIdle` runs).
 */
export function sharedEventStream(path: string, onEvent: (type: string, data: string) => void, onState: (s: StreamState) => void, onIdle?: () => void): () => () => void {
  let followers = 0;
  let stop: (() => void) | null = null;
  return () => {
    if (followers++ === 0) stop = followEventStream(path, onEvent, onState);
    return () => {
      if (--followers > 0) return;
      stop?.();
      stop = null;
      onIdle?.();
    };
  };
}
