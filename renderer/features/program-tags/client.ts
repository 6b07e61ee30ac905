/**
 * The NFC calls the program-tags screens need beyond renderer/lib/api.ts: the single-node write
 * and the server-sent event stream (read with fetch() because EventSource cannot send the
 * Authorization header). Shapes come from server/schemas/nfc.ts.
 */
import { z } from 'zod';
import {
  NfcStatusSchema,
  ReaderStatusSchema,
  RefusalSchema,
  SessionSchema,
  TagWrittenSchema,
  type NfcEventT,
} from '../../../server/schemas/nfc.ts';
import { ApiError, buildUrl, send } from '../../lib/api.ts';
import { useSession } from '../../lib/session.ts';
import { parseEventStream } from './sse.ts';

export type TagWritten = z.infer<typeof TagWrittenSchema>;
export type Refusal = z.infer<typeof RefusalSchema>;
export type ReaderStatus = z.infer<typeof ReaderStatusSchema>;
export type NfcStatus = z.infer<typeof NfcStatusSchema>;

export interface WriteNodeOptions {
  lock?: boolean;
  confirmLock?: boolean;
  reassign?: boolean;
  timeoutMs?: number;
}

/** POST /v1/nfc/write: writes the tag on the reader, or waits up to timeoutMs for one. */
export async function writeNodeTag(slug: string, o: WriteNodeOptions = {}, signal?: AbortSignal): Promise<TagWritten> {
  const body = {
    slug,
    ...(o.lock ? { lock: true, confirm_lock: o.confirmLock === true } : {}),
    ...(o.reassign ? { reassign: true } : {}),
    ...(o.timeoutMs ? { timeout_ms: o.timeoutMs } : {}),
  };
  const res = await send('POST', '/nfc/write', { body, ...(signal ? { signal } : {}) });
  const json = (await res.json()) as { data?: unknown };
  const parsed = TagWrittenSchema.safeParse(json.data);
  if (!parsed.success) throw new ApiError(0, 'Unexpected response from the server (POST /nfc/write).');
  return parsed.data;
}

const PARSERS = {
  reader: ReaderStatusSchema,
  session: SessionSchema.nullable(),
  'tag.written': TagWrittenSchema,
  'tag.refused': RefusalSchema,
  tag: z.object({ reader: z.string(), info: z.unknown() }),
  'tag.off': z.object({ reader: z.string(), uid: z.string().nullable() }),
} as const;

/**
 * Reads GET /v1/nfc/events until the signal aborts. Resolves when the stream ends; rejects
 * with an ApiError for an HTTP refusal (403 not local, 404 no NFC feature, …).
 */
export async function readNfcEvents(onEvent: (e: NfcEventT) => void, signal: AbortSignal): Promise<void> {
  const key = useSession.getState().key;
  let res: Response;
  try {
    res = await fetch(buildUrl('/nfc/events'), {
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
    throw new ApiError(res.status, message);
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer = parseEventStream(buffer + value, (type, raw) => {
        const schema = PARSERS[type as keyof typeof PARSERS];
        if (!schema) return;
        let json: unknown;
        try {
          json = JSON.parse(raw);
        } catch {
          return;
        }
        const parsed = schema.safeParse(json);
        if (parsed.success) onEvent({ type, data: parsed.data } as NfcEventT);
      });
    }
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') return;
    throw err;
  } finally {
    reader.releaseLock();
  }
}
