import { useEffect, useRef, useState } from 'react';
import type { NfcEventT } from '../../../server/schemas/nfc.ts';
import { ApiError } from '../../lib/api.ts';
import { readNfcEvents, type ReaderStatus } from './client.ts';
import { errorMessage } from '../../lib/toast.ts';

export interface NfcLive {
  /** The reader's state as last reported by the stream (null until the first event). */
  reader: ReaderStatus | null;
  /** The stream could not be opened (403 not local, 404 no NFC on this server, server down). */
  error: ApiError | null;
  connected: boolean;
}

/**
 * Follows GET /v1/nfc/events while mounted, reconnecting after a dropped stream. `onEvent`
 * sees every event (tag.written / tag.refused for feedback); the latest one is used.
 */
export function useNfcEvents(onEvent?: (e: NfcEventT) => void): NfcLive {
  const [state, setState] = useState<NfcLive>({ reader: null, error: null, connected: false });
  const handler = useRef(onEvent);
  useEffect(() => {
    handler.current = onEvent;
  });
  useEffect(() => {
    const abort = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const connect = (delay: number) => {
      timer = setTimeout(() => {
        if (abort.signal.aborted) return;
        readNfcEvents((e) => {
          if (e.type === 'reader') setState({ reader: e.data, error: null, connected: true });
          else setState((s) => (s.connected ? s : { ...s, error: null, connected: true }));
          handler.current?.(e);
        }, abort.signal)
          .then(() => {
            if (abort.signal.aborted) return;
            setState((s) => ({ ...s, connected: false }));
            connect(1000);
          })
          .catch((err: unknown) => {
            if (abort.signal.aborted) return;
            const error = err instanceof ApiError ? err : new ApiError(0, errorMessage(err));
            setState((s) => ({ ...s, error, connected: false }));
            // 403/404 will not change by retrying soon; a dropped server may come back.
            connect(error.status === 403 || error.status === 404 ? 15_000 : 2000);
          });
      }, delay);
    };
    connect(0);
    return () => {
      abort.abort();
      clearTimeout(timer);
    };
  }, []);
  return state;
}
