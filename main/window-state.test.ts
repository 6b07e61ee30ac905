import { describe, expect, it } from 'vitest';
import { DEFAULT_WINDOW_STATE, WindowStateStore, fitToDisplays, parseWindowState } from './window-state.ts';

const primary = { x: 0, y: 0, width: 1920, height: 1040 };

describe('window state', () => {
  it('falls back to defaults on missing or malformed files', () => {
    expect(parseWindowState(null)).toEqual(DEFAULT_WINDOW_STATE);
    expect(parseWindowState('{not json')).toEqual(DEFAULT_WINDOW_STATE);
    expect(parseWindowState('"a string"')).toEqual(DEFAULT_WINDOW_STATE);
    expect(parseWindowState('{"width":"big","height":null,"x":1e9,"y":4}')).toEqual(DEFAULT_WINDOW_STATE);
  });

  it('reads a saved state and enforces the minimum size', () => {
    expect(parseWindowState('{"width":1400,"height":900,"x":100,"y":50,"maximized":true}')).toEqual({ width: 1400, height: 900, x: 100, y: 50, maximized: true });
    expect(parseWindowState('{"width":200,"height":100}')).toEqual({ width: 900, height: 600, maximized: false });
  });

  it('drops a position that is on no display any more, and shrinks to fit', () => {
    const onUnplugged = { width: 2400, height: 1400, x: 3000, y: 100, maximized: false };
    expect(fitToDisplays(onUnplugged, [primary])).toEqual({ width: 1920, height: 1040, maximized: false });
    const visible = { width: 1200, height: 800, x: 1920 + 100, y: 100, maximized: false };
    expect(fitToDisplays(visible, [primary, { x: 1920, y: 0, width: 1920, height: 1080 }])).toEqual(visible);
  });

  it('saves the normal bounds and keeps them while maximized', () => {
    let saved: string | null = null;
    const store = new WindowStateStore({ read: () => null, write: (t) => (saved = t) });
    store.update({ x: 10, y: 20, width: 1000, height: 700 }, false);
    store.update({ x: 0, y: 0, width: 1920, height: 1040 }, true);
    store.save();
    expect(JSON.parse(saved!)).toEqual({ width: 1000, height: 700, x: 10, y: 20, maximized: true });
    const again = new WindowStateStore({ read: () => saved, write: () => {} });
    expect(again.get([primary])).toEqual({ width: 1000, height: 700, x: 10, y: 20, maximized: true });
  });

  it('does not throw when the file cannot be written', () => {
    const store = new WindowStateStore({
      read: () => null,
      write: () => {
        throw new Error('EROFS');
      },
    });
    expect(() => store.save()).not.toThrow();
  });
});
