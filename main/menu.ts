// The application menu as plain data (Electron's MenuItemConstructorOptions shape), built from
// callbacks so that it is testable without Electron.

export interface MenuItem {
  label?: string;
  role?: string;
  type?: 'separator';
  accelerator?: string;
  click?: () => void;
  submenu?: MenuItem[];
  enabled?: boolean;
}

export interface MenuActions {
  openDataFolder(): void;
  openInBrowser(): void;
  openApiReference(): void;
  showAbout(): void;
}

export function menuTemplate(opts: { isMac: boolean; devTools: boolean; actions: MenuActions }): MenuItem[] {
  const { isMac, devTools, actions } = opts;
  const sep: MenuItem = { type: 'separator' };
  const menu: MenuItem[] = [];
  if (isMac) {
    menu.push({
      label: 'Waymark',
      submenu: [{ label: 'About Waymark', click: actions.showAbout }, sep, { role: 'services' }, sep, { role: 'hide' }, { role: 'hideOthers' }, { role: 'unhide' }, sep, { role: 'quit' }],
    });
  }
  menu.push({
    label: 'File',
    submenu: [
      { label: 'Open Data Folder', click: actions.openDataFolder },
      { label: 'Open Console in Browser', click: actions.openInBrowser },
      sep,
      isMac ? { role: 'close' } : { role: 'quit' },
    ],
  });
  menu.push({
    label: 'Edit',
    submenu: [{ role: 'undo' }, { role: 'redo' }, sep, { role: 'cut' }, { role: 'copy' }, { role: 'paste' }, { role: 'selectAll' }],
  });
  menu.push({
    label: 'View',
    submenu: [
      { role: 'reload' },
      ...(devTools ? [{ role: 'toggleDevTools' }] : []),
      sep,
      { role: 'resetZoom' },
      { role: 'zoomIn' },
      { role: 'zoomOut' },
      sep,
      { role: 'togglefullscreen' },
    ],
  });
  menu.push({ label: 'Window', submenu: isMac ? [{ role: 'minimize' }, { role: 'zoom' }, sep, { role: 'front' }] : [{ role: 'minimize' }, { role: 'close' }] });
  menu.push({
    label: 'Help',
    submenu: [{ label: 'API Reference (OpenAPI)', click: actions.openApiReference }, ...(isMac ? [] : [sep, { label: 'About Waymark', click: actions.showAbout }])],
  });
  return menu;
}
