// Ambient declarations for the console bundle.
declare module '*.css';

/** What the desktop app's preload exposes (main/preload/index.ts); absent in a browser. */
interface WaymarkDesktop {
  readonly serverUrl: string;
  readonly sessionKey: string;
  readonly version: string;
  /** Opens a PDF in the system viewer, whose Print command shows the system print dialog. */
  readonly printPdf?: (bytes: Uint8Array, filename: string) => Promise<void>;
}

interface Window {
  readonly waymark?: WaymarkDesktop;
}
