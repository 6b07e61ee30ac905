/**
 * The NFC call the program-tags screens need beyond renderer/lib/api.ts: the single-node write
 * (the event stream is renderer/lib/nfcEvents.ts). Shapes come from server/schemas/nfc.ts.
 */
import { z } from 'zod';
import { NfcStatusSchema, ReaderStatusSchema, RefusalSchema, TagWrittenSchema } from '../../../server/schemas/nfc.ts';
import { ApiError, send } from '../../lib/api.ts';

export type TagWritten = z.infer<typeof TagWrittenSchema>;
export type Refusal = z.infer<typeof RefusalSchema>;
export type ReaderStatus = z.infer<typeof ReaderStatusSchema>;
export type NfcStatus = z.infer<typeof NfcStatusSchema>;

export interface WriteNodeOptions {
  lock?: boolean;
  confirmLock?: boolean;
  reassign?: boolean;
  timeoutMs?: number;
  /** A test tag on a loopback scan base (allow_local_scan_base). */
  test?: boolean;
}

/** POST /v1/nfc/write: writes the tag on the reader, or waits up to timeoutMs for one. */
export async function writeNodeTag(slug: string, o: WriteNodeOptions = {}, signal?: AbortSignal): Promise<TagWritten> {
  const body = {
    slug,
    ...(o.lock ? { lock: true, confirm_lock: o.confirmLock === true } : {}),
    ...(o.reassign ? { reassign: true } : {}),
    ...(o.timeoutMs ? { timeout_ms: o.timeoutMs } : {}),
    ...(o.test ? { allow_local_scan_base: true } : {}),
  };
  const res = await send('POST', '/nfc/write', { body, ...(signal ? { signal } : {}) });
  const json = (await res.json()) as { data?: unknown };
  const parsed = TagWrittenSchema.safeParse(json.data);
  if (!parsed.success) throw new ApiError(0, 'Unexpected response from the server (POST /nfc/write).');
  return parsed.data;
}
