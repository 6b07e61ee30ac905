import { describe, expect, it } from 'vitest';
import {
  consoleWindowOptions,
  isAllowedExternalUrl,
  isAllowedNavigation,
  isTrustedSender,
  navigationDecision,
  permissionDecision,
  windowOpenDecision,
} from './security.ts';

const server = 'http://127.0.0.1:8787';

describe('console window options', () => {
  it('locks the renderer down', () => {
    const o = consoleWindowOptions({ preload: '/app/out/preload/index.cjs', bounds: { width: 1200, height: 800 }, devTools: false });
    expect(o.webPreferences).toMatchObject({
      preload: '/app/out/preload/index.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
      devTools: false,
    });
    expect(o.show).toBe(false);
    expect(o).not.toHaveProperty('x');
  });

  it('keeps a saved position only when both coordinates are known', () => {
    expect(consoleWindowOptions({ preload: 'p', bounds: { width: 1000, height: 700, x: 10, y: 20 }, devTools: true })).toMatchObject({ x: 10, y: 20 });
    expect(consoleWindowOptions({ preload: 'p', bounds: { width: 1000, height: 700, x: 10 }, devTools: true })).not.toHaveProperty('x');
  });
});

describe('navigation guard', () => {
  it.each([
    `${server}/console/`,
    `${server}/console/nodes/ABC?x=1`,
    `${server}/console`,
  ])('allows the console of the embedded server: %s', (url) => {
    expect(isAllowedNavigation(url, server)).toBe(true);
    expect(navigationDecision(url, server)).toEqual({ allow: true, openExternally: null });
  });

  it.each([
    `${server}/v1/nodes`,
    `${server}/consolex`,
    `${server}/v/ABCDEFGH`,
    'http://127.0.0.1:8788/console/',
    'https://127.0.0.1:8787/console/',
    'http://localhost:8787/console/',
    'http://user:pw@127.0.0.1:8787/console/',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'not a url',
  ])('denies everything else: %s', (url) => {
    expect(isAllowedNavigation(url, server)).toBe(false);
    expect(navigationDecision(url, server).allow).toBe(false);
  });

  it('hands an external http(s) page to the system browser instead of navigating', () => {
    expect(navigationDecision('https://example.com/docs', server)).toEqual({ allow: false, openExternally: 'https://example.com/docs' });
    expect(navigationDecision('file:///tmp/x.html', server)).toEqual({ allow: false, openExternally: null });
  });

  it('trusts IPC only from a frame showing the console', () => {
    expect(isTrustedSender(`${server}/console/nodes`, server)).toBe(true);
    expect(isTrustedSender('https://evil.example/console/', server)).toBe(false);
    expect(isTrustedSender(undefined, server)).toBe(false);
    expect(isTrustedSender(null, server)).toBe(false);
  });
});

describe('external link allowlist', () => {
  it.each(['https://example.com', 'http://example.com/a?b=c#d', 'https://192.168.1.20:8443/x'])('allows http(s): %s', (url) => {
    expect(isAllowedExternalUrl(url)).toBe(true);
  });

  it.each([
    'file:///C:/Windows/System32/calc.exe',
    'javascript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'smb://server/share',
    'ms-settings:',
    'vbscript:msgbox',
    'mailto:a@example.com',
    'https://user:secret@example.com/',
    'http://',
    '//example.com',
    `https://example.com/${'a'.repeat(2100)}`,
    '',
  ])('refuses: %s', (url) => {
    expect(isAllowedExternalUrl(url)).toBe(false);
  });
});

describe('new windows and permissions', () => {
  it('never opens an Electron window; external http(s) goes to the browser', () => {
    expect(windowOpenDecision('https://example.com/', server)).toEqual({ action: 'deny', openExternally: 'https://example.com/' });
    expect(windowOpenDecision(`${server}/console/nodes`, server)).toEqual({ action: 'deny', openExternally: null });
    expect(windowOpenDecision('file:///etc/passwd', server)).toEqual({ action: 'deny', openExternally: null });
  });

  it.each(['media', 'geolocation', 'notifications', 'clipboard-read', 'usb', 'openExternal'])('denies the %s permission', (p) => {
    expect(permissionDecision(p)).toBe(false);
  });
});
