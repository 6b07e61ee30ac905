import { describe, expect, it, vi } from 'vitest';
import { type MenuItem, menuTemplate } from './menu.ts';

const actions = { openDataFolder: vi.fn(), openInBrowser: vi.fn(), openApiReference: vi.fn(), showAbout: vi.fn() };
const labels = (items: MenuItem[]) => items.map((i) => i.label);
const roles = (item: MenuItem | undefined): string[] => (item?.submenu ?? []).map((i) => i.role ?? i.label ?? '-');

describe('app menu', () => {
  it('has File, Edit, View, Window, Help; an app menu on macOS', () => {
    expect(labels(menuTemplate({ isMac: false, devTools: false, actions }))).toEqual(['File', 'Edit', 'View', 'Window', 'Help']);
    expect(labels(menuTemplate({ isMac: true, devTools: false, actions }))).toEqual(['Waymark', 'File', 'Edit', 'View', 'Window', 'Help']);
  });

  it('offers developer tools only in development builds', () => {
    const view = (devTools: boolean) => menuTemplate({ isMac: false, devTools, actions }).find((m) => m.label === 'View');
    expect(roles(view(true))).toContain('toggleDevTools');
    expect(roles(view(false))).not.toContain('toggleDevTools');
  });

  it('wires the actions', () => {
    const file = menuTemplate({ isMac: false, devTools: false, actions }).find((m) => m.label === 'File')!;
    file.submenu!.find((i) => i.label === 'Open Data Folder')!.click!();
    expect(actions.openDataFolder).toHaveBeenCalledOnce();
    expect(roles(file)).toContain('quit');
  });
});
