import { z } from 'zod';

// Answers per zone name: building a DateTimeFormat costs ~0.3–0.7 ms, and the scan path checks
// stored conditions with this schema each time it caches a node.
const zoneChecks = new Map<string, boolean>();

function isTimeZone(name: string): boolean {
  // Intl also takes UTC offsets ("+05:00") as time zones; they are not IANA names and ignore DST.
  if (/^[+-]/.test(name)) return false;
  let known = zoneChecks.get(name);
  if (known === undefined) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: name });
      known = true;
    } catch {
      known = false;
    }
    if (zoneChecks.size >= 1000) zoneChecks.clear();
    zoneChecks.set(name, known);
  }
  return known;
}

const hhmm = z.string().regex(/^([01][0-9]|2[0-3]):[0-5][0-9]$/, 'must be a time HH:MM (00:00 to 23:59)');

export const TimeWindow = z.strictObject({
  days: z
    .array(z.number().int().min(1, 'must be 1 (Monday) to 7 (Sunday)').max(7, 'must be 1 (Monday) to 7 (Sunday)'))
    .min(1, 'must list at least one day'),
  start_time: hhmm,
  end_time: hhmm,
});

export const TimeConditions = z
  .strictObject({
    timezone: z.string().refine(isTimeZone, 'must be an IANA time zone name such as Europe/Paris'),
    windows: z.array(TimeWindow).min(1, 'must have at least one window').max(50),
  })
  .meta({ id: 'TimeConditions' });
export type TimeConditionsT = z.infer<typeof TimeConditions>;
