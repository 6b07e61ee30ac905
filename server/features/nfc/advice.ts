/**
 * What the field screens say about the reader: a plain reason and what to do about it. Module
 * names, paths and raw errors never go here (they go to the server log), because the person
 * reading this holds a tag, not a terminal.
 */
import type { ReaderState } from './protocol.ts';

export interface ReaderAdvice {
  message: string;
  /** What to do about it, in plain words; null when nothing needs doing. */
  fix: string | null;
}

export const advice = {
  notInstalled: {
    message: 'NFC is not set up on this computer: the part of Waymark that talks to card readers is missing.',
    fix: 'Ask whoever installed Waymark on this computer to add NFC support (docs/nfc.md, "What you need"). The server log says what is missing.',
  },
  cannotLoad: {
    message: 'NFC is installed on this computer but does not start.',
    fix: 'Ask whoever installed Waymark on this computer to reinstall it with NFC support (docs/nfc.md, Troubleshooting). The server log says what failed.',
  },
  disabled: {
    message: 'NFC is switched off on this server.',
    fix: 'Start the server with NFC on (without --no-nfc or WAYMARK_NO_NFC) to write tags.',
  },
  noDaemon: {
    message: 'The card reader service (pcscd) is not running on this computer.',
    fix: 'Start it (sudo systemctl start pcscd, or ask whoever looks after this computer); this screen notices when it is back.',
  },
  daemonStopped: {
    message: 'The card reader service (pcscd) stopped.',
    fix: 'Waiting for it to come back; if it does not, start it (sudo systemctl start pcscd).',
  },
  daemonRestarted: { message: 'The card reader service (pcscd) restarted: reconnecting to it.', fix: null },
  noReader: {
    message: 'No NFC reader connected.',
    fix: 'Plug in the USB NFC reader (e.g. ACS ACR122U); this screen notices it by itself.',
  },
  starting: { message: 'Connecting to the NFC reader…', fix: null },
  restarting: { message: 'Reconnecting to the NFC reader…', fix: null },
  ready: { message: 'Reader ready: place a tag.', fix: null },
  cardPresent: { message: 'Tag on the reader.', fix: null },
} satisfies Record<string, ReaderAdvice>;

/** States in which nothing can be written until someone fixes something. */
export function readerUnusable(state: ReaderState): boolean {
  return state === 'unavailable' || state === 'no_daemon' || state === 'no_reader';
}
