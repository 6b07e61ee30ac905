import { describe, expect, it } from 'vitest';
import { ManualClock } from './clock.ts';
import { ClockAheadError, formatHlc, Hlc, newer, parseHlc } from './hlc.ts';

describe('Hlc', () => {
  it('is 16 hex digits whose string order is time order', () => {
    expect(formatHlc(0x123456789abc, 7)).toBe('123456789abc0007');
    expect(parseHlc('123456789abc0007')).toEqual({ ms: 0x123456789abc, counter: 7 });
    expect(formatHlc(1000, 0xffff) < formatHlc(1001, 0)).toBe(true);
    expect(() => parseHlc('XYZ')).toThrow(/Malformed/);
  });

  it('send follows the wall clock and counts within a millisecond, never going back', () => {
    const clock = new ManualClock(1_000_000);
    const h = new Hlc(() => clock.now());
    expect(h.send()).toBe(formatHlc(1_000_000, 0));
    expect(h.send()).toBe(formatHlc(1_000_000, 1));
    clock.advance(5);
    expect(h.send()).toBe(formatHlc(1_000_005, 0));
    clock.set(999_000); // the wall clock stepped back
    expect(h.send()).toBe(formatHlc(1_000_005, 1));
  });

  it('receive moves past a remote HLC; the next local event orders after it', () => {
    const clock = new ManualClock(1_000_000);
    const h = new Hlc(() => clock.now());
    const remote = formatHlc(1_000_100, 3); // 100 ms ahead: accepted
    expect(h.receive(remote)).toBe(formatHlc(1_000_100, 4));
    expect(h.send() > remote).toBe(true);
    // Same wall time as ours and the remote's: the larger counter wins and is bumped.
    expect(h.receive(formatHlc(1_000_100, 9))).toBe(formatHlc(1_000_100, 10));
  });

  it('rejects an HLC more than 5 minutes ahead of the wall clock, and does not move', () => {
    const clock = new ManualClock(10_000_000);
    const h = new Hlc(() => clock.now());
    expect(() => h.receive(formatHlc(10_000_000 + 5 * 60_000 + 1, 0))).toThrow(ClockAheadError);
    expect(() => h.check(formatHlc(10_000_000 + 6 * 60_000, 0))).toThrow(/^Clock ahead by 360 s/);
    expect(h.send()).toBe(formatHlc(10_000_000, 0));
    h.check(formatHlc(10_000_000 + 5 * 60_000, 0)); // exactly 5 minutes: fine
  });

  it('borrows the next millisecond after 65,536 events in one', () => {
    const clock = new ManualClock(2_000);
    const h = new Hlc(() => clock.now());
    let last = '';
    for (let i = 0; i < 0x10001; i++) last = h.send();
    expect(last).toBe(formatHlc(2_001, 0));
  });

  it('breaks ties by writer id', () => {
    const hlc = formatHlc(5, 0);
    expect(newer({ hlc, writer: 'b' }, { hlc, writer: 'a' })).toBe(true);
    expect(newer({ hlc, writer: 'a' }, { hlc, writer: 'b' })).toBe(false);
    expect(newer({ hlc: formatHlc(6, 0), writer: 'a' }, { hlc, writer: 'z' })).toBe(true);
  });
});
