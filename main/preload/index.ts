// Sandboxed preload (CommonJS, only `electron` available): exposes the minimum the console needs,
// frozen, through contextBridge. No ipcRenderer, no Node API reaches the page.
import { contextBridge, ipcRenderer } from 'electron';
import { type DesktopSession, PRINT_PDF_CHANNEL, SESSION_CHANNEL } from './contract.ts';

const session = ipcRenderer.sendSync(SESSION_CHANNEL) as DesktopSession | null;
if (session && typeof session.sessionKey === 'string') {
  contextBridge.exposeInMainWorld(
    'waymark',
    Object.freeze({
      serverUrl: String(session.serverUrl),
      sessionKey: String(session.sessionKey),
      version: String(session.version),
      // Opens the PDF in the system viewer (its Print shows the system dialog); main checks it.
      printPdf: (bytes: Uint8Array, filename: string): Promise<void> => ipcRenderer.invoke(PRINT_PDF_CHANNEL, bytes, filename),
    }),
  );
}
