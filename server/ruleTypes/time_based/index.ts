/**
 * time_based: evaluated on the wall clock of the rule's IANA zone at the scan instant.
 */
import { defineRuleType, eachRule } from '../define.ts';
import { TimeConditions } from './schema.ts';

export interface LocalTime {
  /** 1 = Monday … 7 = Sunday */
  weekday: number;
  /** minutes since local midnight */
  minute: number;
}

const WEEKDAYS: Record<string, number> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 };

/**
 * Wall-clock weekday and minute of an instant in an IANA zone. Intl applies the zone's rules
 * for that instant, so daylight-saving changes are handled by the platform's tz database.
 * Formatters are cached per zone (creating one is the expensive part).
 */
export class ZoneClock {
  private readonly formatters = new Map<string, Intl.DateTimeFormat>();
  private readonly memo = new Map<string, LocalTime>();

  local(timeZone: string, at: number): LocalTime {
    const minuteStart = Math.floor(at / 60_000);
    const key = `${timeZone}|${minuteStart}`;
    const hit = this.memo.get(key);
    if (hit) return hit;
    let fmt = this.formatters.get(timeZone);
    if (!fmt) {
      fmt = new Intl.DateTimeFormat('en-US', {
        timeZone,
        weekday: 'short',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h23',
      });
      this.formatters.set(timeZone, fmt);
    }
    let weekday = 0;
    let hour = 0;
    let minute = 0;
    for (const part of fmt.formatToParts(at)) {
      if (part.type === 'weekday') weekday = WEEKDAYS[part.value] ?? 0;
      else if (part.type === 'hour') hour = Number(part.value) % 24;
      else if (part.type === 'minute') minute = Number(part.value);
    }
    const result = { weekday, minute: hour * 60 + minute };
    if (this.memo.size > 10_000) this.memo.clear();
    this.memo.set(key, result);
    return result;
  }
}

const defaultZoneClock = new ZoneClock();

function toMinutes(hhmm: string): number {
  const [h, m] = hhmm.split(':');
  return Number(h) * 60 + Number(m);
}

/**
 * Whether `at` falls in one of the windows, in the rule's zone. A window belongs to the day it
 * starts on: Friday 22:00–02:00 covers Friday 22:00 to Saturday 01:59. Start equal to end means
 * the whole day. The end minute is exclusive.
 */
export function matchesTime(
  c: { timezone: string; windows: ReadonlyArray<{ days: number[]; start_time: string; end_time: string }> },
  at: number,
  zones: ZoneClock = defaultZoneClock,
): boolean {
  let local: LocalTime;
  try {
    local = zones.local(c.timezone, at);
  } catch {
    return false; // an unknown zone (validated on write, so only from a newer tz database)
  }
  const yesterday = local.weekday === 1 ? 7 : local.weekday - 1;
  for (const w of c.windows) {
    const start = toMinutes(w.start_time);
    const end = toMinutes(w.end_time);
    if (start < end) {
      if (w.days.includes(local.weekday) && local.minute >= start && local.minute < end) return true;
    } else if (start === end) {
      if (w.days.includes(local.weekday)) return true;
    } else {
      // crosses midnight: the evening part today, the morning part of a window started yesterday
      if (w.days.includes(local.weekday) && local.minute >= start) return true;
      if (w.days.includes(yesterday) && local.minute < end) return true;
    }
  }
  return false;
}

export const timeBased = defineRuleType({
  conditions: TimeConditions,
  compile: eachRule((c, ctx) => matchesTime(c, ctx.at)),
});
