/** How a routing rule reads in the console: its kind and its conditions in words. */
import type { RuleType } from '../../server/schemas/rules.ts';
import { countryName } from './countries.ts';

export const RULE_TYPE_LABELS: Record<RuleType, string> = {
  time_based: 'Time window',
  geo_based: 'Country',
  device_based: 'Device / OS',
  traffic_split: 'Traffic split',
};

export const DAY_NAMES = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'] as const;

export interface WindowValue {
  days: number[];
  start_time: string;
  end_time: string;
}

export function describeConditions(type: RuleType, c: Record<string, unknown>): string {
  switch (type) {
    case 'time_based': {
      const windows = (c.windows as WindowValue[] | undefined) ?? [];
      const text = windows.map((w) => `${w.days.map((d) => DAY_NAMES[d - 1]).join(', ')} ${w.start_time}–${w.end_time}`).join('; ');
      return `${text} (${String(c.timezone)})`;
    }
    case 'geo_based':
      return ((c.countries as string[] | undefined) ?? []).map(countryName).join(', ');
    case 'device_based':
      return [...((c.devices as string[] | undefined) ?? []), ...((c.os as string[] | undefined) ?? [])].join(', ');
    case 'traffic_split':
      return `${String(c.weight)}% of visitors`;
  }
}
