/** IPC between the preload and main: the session, read once at start-up… */
export const SESSION_CHANNEL = 'waymark:session';
/** …and printing a PDF through the system's viewer and print dialog. */
export const PRINT_PDF_CHANNEL = 'waymark:print-pdf';

/** What window.waymark exposes to the console (renderer/env.d.ts declares the same shape). */
export interface DesktopSession {
  serverUrl: string;
  sessionKey: string;
  version: string;
}
