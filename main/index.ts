// Electron main: starts the Waymark server in-process on the user's data folder, opens one
// locked-down window on its console, and hands the console a session key through the preload.
// The decisions (window options, navigation, links, permissions, window state, menu) live in
// plain modules beside this file and are unit-tested without Electron.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BrowserWindow, Menu, app, dialog, ipcMain, safeStorage, screen, session, shell, utilityProcess } from 'electron';
import { CONSOLE_CSP } from '../server/http/console.ts';
import { type RunningServer, startServer } from '../server/serve.ts';
import { menuTemplate } from './menu.ts';
import { chooseNfcChildRuntime, nfcChildSpawner } from './nfc-child.ts';
import { type DesktopSession, PRINT_PDF_CHANNEL, SESSION_CHANNEL } from './preload/contract.ts';
import { checkPrintRequest } from './print.ts';
import { keychainSecretStore } from './secrets.ts';
import { consoleWindowOptions, isAllowedExternalUrl, isTrustedSender, navigationDecision, permissionDecision, windowOpenDecision } from './security.ts';
import { parseSettings } from './settings.ts';
import { WindowStateStore } from './window-state.ts';

const SESSION_KEY_NAME = 'Desktop app session';
const here = import.meta.dirname; // out/main

let running: RunningServer | undefined;
let sessionKey: string | undefined;
let orgId: string | undefined;
let mainWindow: BrowserWindow | undefined;

function readText(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

function openExternal(url: string): void {
  if (isAllowedExternalUrl(url)) void shell.openExternal(url);
}

async function startEmbeddedServer(userData: string): Promise<RunningServer> {
  const { settings, problems } = parseSettings(readText(join(userData, 'settings.json')));
  const nfcRuntime = chooseNfcChildRuntime({ inElectron: true, packaged: app.isPackaged, nfcNode: settings.nfcNode, execPath: process.execPath });
  for (const p of [...problems, ...nfcRuntime.problems]) console.warn(`settings.json: ${p}`);
  const options = {
    host: settings.host,
    dataDir: join(userData, 'data'),
    scanBase: settings.scanBase,
    consoleDir: join(here, '..', 'renderer'),
    // The remote key of a site paired from the console, encrypted with the OS keychain.
    secrets: keychainSecretStore(join(userData, 'secrets.json'), safeStorage),
    // The reader bridge's child (bridge-child.js, bundled beside this file) as a utilityProcess
    // on Electron's own runtime; nfcNode is a developer override for checkouts (nfc-child.ts).
    nfc: { spawn: nfcChildSpawner(nfcRuntime.runtime, utilityProcess) },
  };
  try {
    return await startServer({ ...options, port: settings.port });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || settings.port === 0) throw err;
    return startServer({ ...options, port: 0 });
  }
}

function hardenSessions(serverUrl: string): void {
  const ses = session.defaultSession;
  ses.setPermissionRequestHandler((_wc, permission, callback) => callback(permissionDecision(permission)));
  ses.setPermissionCheckHandler((_wc, permission) => permissionDecision(permission));
  // The server already sends the CSP; this makes sure the window never runs without it.
  const origin = new URL(serverUrl).origin;
  ses.webRequest.onHeadersReceived((details, callback) => {
    if (!details.url.startsWith(`${origin}/console`)) return callback({});
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [CONSOLE_CSP] } });
  });

  app.on('web-contents-created', (_event, contents) => {
    contents.on('will-navigate', (event, url) => {
      const decision = navigationDecision(url, serverUrl);
      if (!decision.allow) {
        event.preventDefault();
        if (decision.openExternally) openExternal(decision.openExternally);
      }
    });
    contents.on('will-redirect', (event, url) => {
      if (!navigationDecision(url, serverUrl).allow) event.preventDefault();
    });
    contents.on('will-attach-webview', (event) => event.preventDefault());
    contents.setWindowOpenHandler(({ url }) => {
      const decision = windowOpenDecision(url, serverUrl);
      if (decision.openExternally) openExternal(decision.openExternally);
      return { action: decision.action };
    });
  });
}

function createWindow(serverUrl: string, userData: string): BrowserWindow {
  const store = new WindowStateStore({
    read: () => readText(join(userData, 'window-state.json')),
    write: (text) => writeFileSync(join(userData, 'window-state.json'), text),
  });
  const state = store.get(screen.getAllDisplays().map((d) => d.workArea));
  const win = new BrowserWindow(
    consoleWindowOptions({ preload: join(here, '..', 'preload', 'index.cjs'), bounds: state, devTools: !app.isPackaged }),
  );
  if (state.maximized) win.maximize();
  let timer: NodeJS.Timeout | undefined;
  const remember = () => {
    store.update(win.getNormalBounds(), win.isMaximized());
    clearTimeout(timer);
    timer = setTimeout(() => store.save(), 500);
  };
  win.on('resize', remember);
  win.on('move', remember);
  win.on('maximize', remember);
  win.on('unmaximize', remember);
  win.on('close', () => {
    clearTimeout(timer);
    store.update(win.getNormalBounds(), win.isMaximized());
    store.save();
  });
  win.once('ready-to-show', () => win.show());
  void win.loadURL(`${serverUrl}/console/`);
  return win;
}

async function main(): Promise<void> {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return;
  }
  app.on('second-instance', () => {
    if (!mainWindow) return;
    if (mainWindow.isMinimized()) mainWindow.restore();
    mainWindow.focus();
  });
  app.enableSandbox();
  await app.whenReady();

  const userData = app.getPath('userData');
  mkdirSync(userData, { recursive: true });
  try {
    running = await startEmbeddedServer(userData);
  } catch (err) {
    dialog.showErrorBox('Waymark could not start', `The embedded server did not start:\n${err instanceof Error ? err.message : String(err)}`);
    app.exit(1);
    return;
  }
  const serverUrl = running.url.replace('://0.0.0.0', '://127.0.0.1');
  const created = await running.app.services.keys.startSessionKey(SESSION_KEY_NAME);
  sessionKey = created.apiKey;
  orgId = created.key.org_id;

  ipcMain.on(SESSION_CHANNEL, (event) => {
    const trusted = isTrustedSender(event.senderFrame?.url, serverUrl);
    const reply: DesktopSession | null = trusted && sessionKey ? { serverUrl, sessionKey, version: app.getVersion() } : null;
    event.returnValue = reply;
  });

  let printDir: string | undefined;
  ipcMain.handle(PRINT_PDF_CHANNEL, async (event, bytes: unknown, filename: unknown) => {
    if (!isTrustedSender(event.senderFrame?.url, serverUrl)) throw new Error('untrusted sender');
    const check = checkPrintRequest(bytes, filename);
    if (!check.ok) throw new Error(`cannot print: ${check.reason}`);
    printDir ??= mkdtempSync(join(app.getPath('temp'), 'waymark-print-'));
    const file = join(printDir, check.filename);
    writeFileSync(file, check.bytes);
    const failure = await shell.openPath(file);
    if (failure) throw new Error(`no PDF viewer could open the labels: ${failure}`);
  });

  hardenSessions(serverUrl);
  Menu.setApplicationMenu(
    Menu.buildFromTemplate(
      menuTemplate({
        isMac: process.platform === 'darwin',
        devTools: !app.isPackaged,
        actions: {
          openDataFolder: () => void shell.openPath(join(userData, 'data')),
          openInBrowser: () => openExternal(`${running!.url}/console/`),
          openApiReference: () => openExternal(`${running!.url}/v1/openapi.json`),
          showAbout: () =>
            void dialog.showMessageBox({
              type: 'info',
              title: 'About Waymark',
              message: `Waymark ${app.getVersion()}`,
              detail: `Server: ${running!.url}\nData: ${join(userData, 'data')}\nElectron ${process.versions.electron}`,
            }),
        },
      }) as Electron.MenuItemConstructorOptions[],
    ),
  );
  mainWindow = createWindow(serverUrl, userData);
  mainWindow.on('closed', () => (mainWindow = undefined));
  app.on('activate', () => {
    if (!mainWindow) mainWindow = createWindow(serverUrl, userData);
  });
}

app.on('window-all-closed', () => {
  if (process.platform !== 'darwin') app.quit();
});

let quitting = false;
app.on('will-quit', (event) => {
  if (quitting || !running) return;
  quitting = true;
  event.preventDefault();
  const server = running;
  // A failed revoke is harmless: the next start revokes the key anyway.
  const revoked = orgId ? server.app.services.keys.endSessionKeys(SESSION_KEY_NAME, orgId).catch(() => undefined) : Promise.resolve();
  void revoked.then(() => server.close()).finally(() => app.quit());
});

void main();
