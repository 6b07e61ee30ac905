/**
 * The NFC event stream (GET /v1/nfc/events): the reader's state, tags placed and lifted, tags
 * written or refused, and the writing session, live. Shared by the Program tags screen, its
 * feedback banner and the node page's Write NFC tag tab.
 */
import { useEffect, useRef } from 'react';
import { z } from 'zod';
import { create } from 'zustand';
import { ReaderStatusSchema, RefusalSchema, SessionSchema, TagReadingSchema, TagWrittenSchema, type NfcEventT } from '../../server/schemas/nfc.ts';
import type { ApiError } from './api.ts';
import { sharedEventStream } from './eventStream.ts';

export type ReaderStatus = z.infer<typeof ReaderStatusSchema>;
export type NfcSession = z.infer<typeof SessionSchema>;
export type TagReading = z.infer<typeof TagReadingSchema>;

/** States in which no tag can be written until someone fixes something (the reader says what). */
export function readerUnusable(reader: ReaderStatus): boolean {
  return reader.state === 'unavailable' || reader.state === 'no_daemon' || reader.state === 'no_reader';
}

const PARSERS = {
  reader: ReaderStatusSchema,
  session: SessionSchema.nullable(),
  'tag.written': TagWrittenSchema,
  'tag.refused': RefusalSchema,
  'tag.read': TagReadingSchema,
  tag: z.object({ reader: z.string(), info: z.unknown() }),
  'tag.off': z.object({ reader: z.string(), uid: z.string().nullable() }),
} as const;

/** One event of the stream, checked against its schema (unknown or malformed events are dropped). */
export function parseNfcEvent(type: string, raw: string): NfcEventT | null {
  const schema = PARSERS[type as keyof typeof PARSERS];
  if (!schema) return null;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return null;
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? ({ type, data: parsed.data } as NfcEventT) : null;
}

export interface NfcLive {
  /** The reader's state as last reported by the stream (null until the first event). */
  reader: ReaderStatus | null;
  /** This organization's writing session as last reported (undefined until the first event; null: none). */
  session: NfcSession | null | undefined;
  /** What the tag on the reader holds (check mode); null when no tag is on it. */
  tag: TagReading | null;
  /** The stream could not be opened (403 not local, 404 no NFC on this server, server down). */
  error: ApiError | null;
  connected: boolean;
}

const NOTHING_YET: NfcLive = { reader: null, session: undefined, tag: null, error: null, connected: false };
const useNfcLive = create<NfcLive>(() => NOTHING_YET);
const listeners = new Set<(e: NfcEventT) => void>();

const subscribe = sharedEventStream(
  '/nfc/events',
  (type, raw) => {
    const e = parseNfcEvent(type, raw);
    if (!e) return;
    if (e.type === 'reader') useNfcLive.setState((s) => ({ reader: e.data, tag: e.data.state === 'card_present' ? s.tag : null }));
    else if (e.type === 'session') useNfcLive.setState({ session: e.data });
    else if (e.type === 'tag.read') useNfcLive.setState({ tag: e.data });
    else if (e.type === 'tag.off') useNfcLive.setState((s) => (s.tag && (e.data.uid === null || s.tag.uid === e.data.uid) ? { tag: null } : {}));
    for (const listener of listeners) listener(e);
  },
  (s) => useNfcLive.setState(s),
  // Nobody follows the stream any more: what it said goes stale.
  () => useNfcLive.setState(NOTHING_YET),
);

/**
 * Follows GET /v1/nfc/events while mounted (one stream per tab, shared by every component that
 * follows it), reconnecting after a dropped stream. `onEvent` sees every event (tag.written /
 * tag.refused for feedback); the latest one is used.
 */
export function useNfcEvents(onEvent?: (e: NfcEventT) => void): NfcLive {
  const state = useNfcLive();
  const handler = useRef(onEvent);
  useEffect(() => {
    handler.current = onEvent;
  });
  useEffect(() => {
    const listener = (e: NfcEventT) => handler.current?.(e);
    listeners.add(listener);
    const unsubscribe = subscribe();
    return () => {
      listeners.delete(listener);
      unsubscribe();
    };
  }, []);
  return state;
}
