/** The one IPC message between the preload and main: the session, read once at start-up. */
export const SESSION_CHANNEL = 'waymark:session';

/** What window.waymark exposes to the console (renderer/env.d.ts declares the same shape). */
export interface DesktopSession {
  serverUrl: string;
  sessionKey: string;
  version: string;
}
