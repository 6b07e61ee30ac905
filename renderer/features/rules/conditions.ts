import type { RuleType } from '../../../server/schemas/rules.ts';
import type { WindowValue } from '../../lib/ruleText.ts';

// Shared with the analytics tab (its breakdown by matched rule), so they live in lib.
export { DAY_NAMES, RULE_TYPE_LABELS, describeConditions, type WindowValue } from '../../lib/ruleText.ts';

export function defaultConditions(type: RuleType, timezone: string): Record<string, unknown> {
  switch (type) {
    case 'time_based':
      return { timezone, windows: [{ days: [1, 2, 3, 4, 5], start_time: '09:00', end_time: '17:00' }] };
    case 'geo_based':
      return { countries: [] };
    case 'device_based':
      return { devices: [], os: [] };
    case 'traffic_split':
      return { weight: 50 };
  }
}

/** Drops empty device/os lists (the schema wants at least one of them, each non-empty). */
export function cleanConditions(type: RuleType, c: Record<string, unknown>): Record<string, unknown> {
  if (type !== 'device_based') return c;
  const out: Record<string, unknown> = {};
  if (Array.isArray(c.devices) && c.devices.length > 0) out.devices = c.devices;
  if (Array.isArray(c.os) && c.os.length > 0) out.os = c.os;
  return out;
}

function minutes(t: string): number {
  const [h, m] = t.split(':').map(Number);
  return (h ?? 0) * 60 + (m ?? 0);
}

/**
 * Which hours of the week (day 1..7 × hour 0..23) a set of windows covers, at least partly;
 * a window whose end is before its start runs past midnight into the next day.
 */
export function coverage(windows: WindowValue[]): boolean[][] {
  const grid = Array.from({ length: 7 }, () => Array<boolean>(24).fill(false));
  for (const w of windows) {
    if (!/^\d\d:\d\d$/.test(w.start_time) || !/^\d\d:\d\d$/.test(w.end_time)) continue;
    const start = minutes(w.start_time);
    let end = minutes(w.end_time);
    if (end <= start) end += 24 * 60;
    for (const day of w.days) {
      if (day < 1 || day > 7) continue;
      for (let h = 0; h < 48; h++) {
        const from = h * 60;
        const to = from + 60;
        if (to > start && from < end) {
          const d = (day - 1 + Math.floor(h / 24)) % 7;
          grid[d]![h % 24] = true;
        }
      }
    }
  }
  return grid;
}
