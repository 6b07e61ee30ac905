// The desktop window's security decisions, as plain functions (no Electron import) so that they
// are unit-tested under Node. main/index.ts wires them into Electron.

/** webPreferences and window options for the console window. */
export interface ConsoleWindowOptions {
  width: number;
  height: number;
  x?: number;
  y?: number;
  minWidth: number;
  minHeight: number;
  show: boolean;
  title: string;
  backgroundColor: string;
  autoHideMenuBar: boolean;
  webPreferences: {
    preload: string;
    contextIsolation: true;
    sandbox: true;
    nodeIntegration: false;
    nodeIntegrationInWorker: false;
    nodeIntegrationInSubFrames: false;
    webSecurity: true;
    allowRunningInsecureContent: false;
    webviewTag: false;
    navigateOnDragDrop: false;
    safeDialogs: true;
    spellcheck: boolean;
    devTools: boolean;
  };
}

export interface Bounds {
  width: number;
  height: number;
  x?: number | undefined;
  y?: number | undefined;
}

export function consoleWindowOptions(input: { preload: string; bounds: Bounds; devTools: boolean }): ConsoleWindowOptions {
  return {
    width: input.bounds.width,
    height: input.bounds.height,
    ...(input.bounds.x !== undefined && input.bounds.y !== undefined ? { x: input.bounds.x, y: input.bounds.y } : {}),
    minWidth: 900,
    minHeight: 600,
    show: false,
    title: 'Waymark',
    backgroundColor: '#f5f6f8',
    autoHideMenuBar: false,
    webPreferences: {
      preload: input.preload,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      safeDialogs: true,
      spellcheck: true,
      devTools: input.devTools,
    },
  };
}

function parse(url: string): URL | null {
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

/**
 * In-window navigation is allowed only inside the console of the embedded server:
 * same scheme, host and port, and a path under /console/. Everything else is denied.
 */
export function isAllowedNavigation(url: string, serverUrl: string): boolean {
  const target = parse(url);
  const server = parse(serverUrl);
  if (!target || !server) return false;
  if (target.origin !== server.origin) return false;
  if (target.username || target.password) return false;
  return target.pathname === '/console' || target.pathname.startsWith('/console/');
}

/** A message from the renderer is trusted only when its frame shows the console of our server. */
export function isTrustedSender(frameUrl: string | undefined | null, serverUrl: string): boolean {
  return typeof frameUrl === 'string' && isAllowedNavigation(frameUrl, serverUrl);
}

/**
 * Links the user may open in the system browser: http and https only, with a host, without
 * embedded credentials, of a sane length. file:, javascript:, data:, custom protocols … are refused.
 */
export function isAllowedExternalUrl(url: string): boolean {
  if (typeof url !== 'string' || url.length > 2048) return false;
  const target = parse(url);
  if (!target) return false;
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return false;
  if (!target.hostname) return false;
  if (target.username || target.password) return false;
  return true;
}

export type OpenDecision = { action: 'deny'; openExternally: string | null };

/**
 * window.open / target=_blank: never a new Electron window. An allowed http(s) link outside the
 * console goes to the system browser; a link into the console itself is ignored (it would open
 * without the session); anything else is dropped.
 */
export function windowOpenDecision(url: string, serverUrl: string): OpenDecision {
  if (isAllowedNavigation(url, serverUrl)) return { action: 'deny', openExternally: null };
  return { action: 'deny', openExternally: isAllowedExternalUrl(url) ? url : null };
}

/** will-navigate: stay if inside the console; otherwise prevent, and maybe hand the link to the browser. */
export function navigationDecision(url: string, serverUrl: string): { allow: boolean; openExternally: string | null } {
  if (isAllowedNavigation(url, serverUrl)) return { allow: true, openExternally: null };
  return { allow: false, openExternally: isAllowedExternalUrl(url) ? url : null };
}

/** Camera, microphone, geolocation, notifications, USB, clipboard-read …: all denied. */
export function permissionDecision(_permission: string): boolean {
  return false;
}
