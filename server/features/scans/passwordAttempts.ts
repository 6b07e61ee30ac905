/**
 * Password attempts on a gated node, per node and client address, so a password cannot be
 * guessed by brute force: at most MAX_ATTEMPTS in a fixed window of WINDOW_MS. An attempt counts
 * when it starts (before the slow hash), so attempts sent in parallel are bounded too; a right
 * password clears the address's count. In memory, per process (docs/scans.md "Node limits").
 */
export const MAX_ATTEMPTS = 5;
export const WINDOW_MS = 15 * 60_000;
/** Keys kept at most; the oldest windows are dropped first (a Map iterates in insertion order). */
const MAX_KEYS = 100_000;

export class PasswordAttempts {
  private readonly windows = new Map<string, { from: number; count: number }>();
  private readonly max: number;
  private readonly windowMs: number;

  constructor(options: { max?: number; windowMs?: number } = {}) {
    this.max = options.max ?? MAX_ATTEMPTS;
    this.windowMs = options.windowMs ?? WINDOW_MS;
  }

  /** Starts an attempt at `now` (clock ms): 0 if it may go on, else the seconds until it may. */
  begin(key: string, now: number): number {
    let w = this.windows.get(key);
    if (w && now - w.from >= this.windowMs) {
      this.windows.delete(key);
      w = undefined;
    }
    if (!w) {
      if (this.windows.size >= MAX_KEYS) this.windows.delete(this.windows.keys().next().value as string);
      w = { from: now, count: 0 };
      this.windows.set(key, w);
    }
    if (w.count >= this.max) return Math.ceil((w.from + this.windowMs - now) / 1000);
    w.count++;
    return 0;
  }

  /** The right password: the address starts afresh. */
  succeeded(key: string): void {
    this.windows.delete(key);
  }
}
