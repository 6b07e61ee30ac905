// Ambient declarations for the console bundle.
declare module '*.css';

/** What the desktop app's preload exposes (main/preload/index.ts); absent in a browser. */
interface WaymarkDesktop {
  readonly serverUrl: string;
  readonly sessionKey: string;
  readonly version: string;
}

interface Window {
  readonly waymark?: WaymarkDesktop;
}
