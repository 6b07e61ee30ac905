/**
 * Hybrid logical clock: 48 bits of wall-clock milliseconds and a 16-bit counter, written as 16
 * hex digits so that string order is time order. Ties between writers are broken by the writer
 * id (compared as strings) wherever versions are compared (`newer`).
 */
export const MAX_AHEAD_MS = 5 * 60_000;

export class ClockAheadError extends Error {
  readonly aheadMs: number;
  constructor(aheadMs: number) {
    super(`Clock ahead by ${Math.round(aheadMs / 1000)} s (more than ${MAX_AHEAD_MS / 60_000} minutes): fix the clock of the writer`);
    this.aheadMs = aheadMs;
  }
}

const HLC_RE = /^[0-9a-f]{16}$/;

export function formatHlc(ms: number, counter: number): string {
  return ms.toString(16).padStart(12, '0') + counter.toString(16).padStart(4, '0');
}

export function parseHlc(hlc: string): { ms: number; counter: number } {
  if (!HLC_RE.test(hlc)) throw new Error(`Malformed HLC ${JSON.stringify(hlc)}`);
  return { ms: parseInt(hlc.slice(0, 12), 16), counter: parseInt(hlc.slice(12), 16) };
}

export function isHlc(value: string): boolean {
  return HLC_RE.test(value);
}

/** Whether version a = (hlc, writer) is newer than b (the last-writer-wins order). */
export function newer(a: { hlc: string; writer: string }, b: { hlc: string; writer: string }): boolean {
  return a.hlc > b.hlc || (a.hlc === b.hlc && a.writer > b.writer);
}

export class Hlc {
  private ms = 0;
  private counter = 0;
  private readonly now: () => number;

  constructor(now: () => number) {
    this.now = now;
  }

  /** Never go below a value already handed out (e.g. the largest HLC in the database at start). */
  observe(hlc: string | null | undefined): void {
    if (!hlc || !isHlc(hlc)) return;
    const r = parseHlc(hlc);
    if (r.ms > this.ms || (r.ms === this.ms && r.counter > this.counter)) {
      this.ms = r.ms;
      this.counter = r.counter;
    }
  }

  /** The HLC of a local event. */
  send(): string {
    const now = this.now();
    if (now > this.ms) {
      this.ms = now;
      this.counter = 0;
    } else {
      this.bump();
    }
    return formatHlc(this.ms, this.counter);
  }

  /** Throws ClockAheadError when `hlc` is more than 5 minutes ahead of this clock's wall time. */
  check(hlc: string): void {
    const ahead = parseHlc(hlc).ms - this.now();
    if (ahead > MAX_AHEAD_MS) throw new ClockAheadError(ahead);
  }

  /** Merges a remote HLC (after `check`): later local events order after it. */
  receive(hlc: string): string {
    this.check(hlc);
    const r = parseHlc(hlc);
    const now = this.now();
    const ms = Math.max(this.ms, r.ms, now);
    if (ms === this.ms && ms === r.ms) this.counter = Math.max(this.counter, r.counter) + 1;
    else if (ms === this.ms) this.counter += 1;
    else if (ms === r.ms) this.counter = r.counter + 1;
    else this.counter = 0;
    this.ms = ms;
    if (this.counter > 0xffff) this.bump();
    return formatHlc(this.ms, this.counter);
  }

  private bump(): void {
    this.counter += 1;
    if (this.counter > 0xffff) {
      // 65,536 events in one millisecond: borrow the next millisecond.
      this.ms += 1;
      this.counter = 0;
    }
  }
}
