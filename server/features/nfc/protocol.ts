/** Messages between the API process (bridge.ts) and the PC/SC child (bridge-child.ts), over IPC. */
import type { NfcErrorCode, TagInfo, WriteOptions, WriteOutcome } from './program.ts';

export type ReaderState =
  | 'starting' // the child is starting
  | 'unavailable' // nfc-pcsc is not installed or cannot load: final
  | 'no_daemon' // pcscd is not running
  | 'no_reader' // pcscd runs, no reader plugged
  | 'ready' // at least one reader, no tag on it
  | 'card_present'; // a card is on a reader

export interface CardOnReader {
  reader: string;
  info: TagInfo;
}

export type ToChild =
  | ({
      type: 'write';
      id: number;
      url: string;
      lock: boolean;
      verifyOnly?: boolean | undefined;
      reader?: string | undefined;
      expectUid?: string | undefined;
      /** For an NTAG 424 DNA: its five per-tag keys (hex) and their version. Never logged. */
      ntag424?: Ntag424KeysHex | undefined;
    } & Pick<WriteOptions, 'mirror' | 'protect' | 'password' | 'newPassword' | 'configured'>)
  | { type: 'feedback'; reader: string; ok: boolean }
  | { type: 'shutdown' };

export type FromChild =
  | { type: 'heartbeat' }
  | { type: 'state'; state: ReaderState; message: string; fix?: string | null; readers: string[] }
  | { type: 'card'; card: CardOnReader }
  | { type: 'card.off'; reader: string; uid: string | null }
  | { type: 'result'; id: number; ok: true; outcome: WriteOutcome }
  | { type: 'result'; id: number; ok: false; error: { code: NfcErrorCode; message: string } }
  | { type: 'log'; message: string };

/** Exit code of a child that will never work on this machine (nfc-pcsc missing): no restart. */
export const EXIT_UNAVAILABLE = 3;

/** An NTAG 424 DNA's per-tag keys 0..4 (hex) at a master key version; never logged. */
export interface Ntag424KeysHex {
  keys: string[];
  version: number;
  /** The keys of the older version the tag is keyed from, when it is to be re-keyed to `version`. */
  previous?: { keys: string[]; version: number } | undefined;
}
