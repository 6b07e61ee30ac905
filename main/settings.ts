// The desktop app's server settings: <userData>/settings.json, all optional.
//   { "host": "127.0.0.1", "port": 8787, "scanBase": "https://w.example.com" }
// host 0.0.0.0 makes the console and scan URLs reachable from the LAN (phones scanning tags).

export interface DesktopSettings {
  host: string;
  /** Preferred port; when busy the app falls back to a free one. */
  port: number;
  scanBase: string | undefined;
  /**
   * Developer override, for `electron .` from a checkout only: a Node (≥ 22.12) binary for the NFC
   * bridge child, whose node_modules hold the PC/SC module built for Node, not Electron. Unset (and
   * always in the installed app): the child is a utilityProcess on Electron's runtime.
   */
  nfcNode: string | undefined;
}

export const DEFAULT_SETTINGS: DesktopSettings = { host: '127.0.0.1', port: 8787, scanBase: undefined, nfcNode: undefined };

export function parseSettings(text: string | null | undefined): { settings: DesktopSettings; problems: string[] } {
  const problems: string[] = [];
  if (!text) return { settings: { ...DEFAULT_SETTINGS }, problems };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { settings: { ...DEFAULT_SETTINGS }, problems: ['settings.json is not valid JSON; using defaults'] };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { settings: { ...DEFAULT_SETTINGS }, problems: ['settings.json must hold an object'] };
  const r = raw as Record<string, unknown>;
  const settings = { ...DEFAULT_SETTINGS };
  if (r.host !== undefined) {
    if (typeof r.host === 'string' && /^[0-9a-fA-F.:]+$|^localhost$/.test(r.host)) settings.host = r.host;
    else problems.push('host must be an IP address such as 127.0.0.1 or 0.0.0.0');
  }
  if (r.port !== undefined) {
    if (typeof r.port === 'number' && Number.isInteger(r.port) && r.port >= 0 && r.port <= 65535) settings.port = r.port;
    else problems.push('port must be a whole number from 0 to 65535');
  }
  if (r.scanBase !== undefined) {
    if (typeof r.scanBase === 'string' && /^https?:\/\/[^/\s]+(\/[^\s]*)?$/i.test(r.scanBase)) settings.scanBase = r.scanBase;
    else problems.push('scanBase must be an http(s) URL such as https://w.example.com');
  }
  if (r.nfcNode !== undefined) {
    if (typeof r.nfcNode === 'string' && (r.nfcNode.startsWith('/') || /^[A-Za-z]:[\\/]/.test(r.nfcNode))) settings.nfcNode = r.nfcNode;
    else problems.push('nfcNode must be the absolute path of a Node binary');
  }
  return { settings, problems };
}
