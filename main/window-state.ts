// Window size/position/maximized, persisted as a small JSON file in the user data folder.
// Plain logic with injected file access, unit-tested without Electron.

export interface WindowState {
  width: number;
  height: number;
  x?: number | undefined;
  y?: number | undefined;
  maximized: boolean;
}

export interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export const DEFAULT_WINDOW_STATE: WindowState = { width: 1280, height: 820, maximized: false };
const MIN = { width: 900, height: 600 };
const MAX = 20_000;

function int(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && Math.abs(v) <= MAX ? Math.round(v) : undefined;
}

/** Reads a saved state leniently: anything malformed falls back to the defaults. */
export function parseWindowState(text: string | null | undefined): WindowState {
  if (!text) return { ...DEFAULT_WINDOW_STATE };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { ...DEFAULT_WINDOW_STATE };
  }
  if (typeof raw !== 'object' || raw === null) return { ...DEFAULT_WINDOW_STATE };
  const r = raw as Record<string, unknown>;
  const width = int(r.width);
  const height = int(r.height);
  const x = int(r.x);
  const y = int(r.y);
  return {
    width: width !== undefined ? Math.max(MIN.width, width) : DEFAULT_WINDOW_STATE.width,
    height: height !== undefined ? Math.max(MIN.height, height) : DEFAULT_WINDOW_STATE.height,
    ...(x !== undefined && y !== undefined ? { x, y } : {}),
    maximized: r.maximized === true,
  };
}

/**
 * Keeps the window on a display that still exists: if the saved position is not mostly visible
 * on any work area (a monitor was unplugged), the position is dropped (the OS centres the window)
 * and the size is shrunk to fit the primary display.
 */
export function fitToDisplays(state: WindowState, workAreas: Rect[]): WindowState {
  const primary = workAreas[0];
  let { width, height } = state;
  if (primary) {
    width = Math.min(width, primary.width);
    height = Math.min(height, primary.height);
  }
  if (state.x === undefined || state.y === undefined) return { width, height, maximized: state.maximized };
  const win = { x: state.x, y: state.y, width, height };
  const visible = workAreas.some((a) => {
    const w = Math.min(win.x + win.width, a.x + a.width) - Math.max(win.x, a.x);
    const h = Math.min(win.y + win.height, a.y + a.height) - Math.max(win.y, a.y);
    return w >= Math.min(200, win.width) && h >= Math.min(100, win.height) && win.y >= a.y - 10;
  });
  return visible ? { ...win, maximized: state.maximized } : { width, height, maximized: state.maximized };
}

export interface StateFile {
  read(): string | null;
  write(text: string): void;
}

/** Loads once, then saves (debounced by the caller) the latest normal bounds and maximized flag. */
export class WindowStateStore {
  private readonly file: StateFile;
  private state: WindowState;

  constructor(file: StateFile) {
    this.file = file;
    this.state = parseWindowState(file.read());
  }

  get(workAreas: Rect[]): WindowState {
    return fitToDisplays(this.state, workAreas);
  }

  /** Records the window; while maximized only the flag changes (the normal bounds are kept). */
  update(bounds: Rect, maximized: boolean): void {
    this.state = maximized ? { ...this.state, maximized: true } : { ...parseWindowState(JSON.stringify(bounds)), maximized: false };
  }

  save(): void {
    try {
      this.file.write(`${JSON.stringify(this.state, null, 2)}\n`);
    } catch {
      // A read-only profile must not break the app: the state is simply not kept.
    }
  }
}
