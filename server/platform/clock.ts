/** Time source injected everywhere time matters, so tests can move it. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock that tests drive by hand. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start: number | string = '2026-11-21T12:00:00.000Z') {
    this.current = typeof start === 'string' ? Date.parse(start) : start;
  }
  now(): number {
    return this.current;
  }
  set(at: number | string): void {
    this.current = typeof at === 'string' ? Date.parse(at) : at;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}

export function isoAt(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}
