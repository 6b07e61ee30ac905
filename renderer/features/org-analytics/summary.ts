// Figures the organization's analytics screen derives from GET /v1/analytics, kept free of React
// for unit tests.
import { SCAN_SOURCES } from '../../../server/schemas/tapProofs.ts';

export interface CountRow {
  value: string | null;
  scans: number;
}

/**
 * Every scan source in a fixed order (QR, verified taps, unverified taps), zero where the period
 * had none: "0 verified taps" is itself an answer. A source the console does not know follows.
 */
export function sourceRows(rows: CountRow[]): CountRow[] {
  const counts = new Map(rows.map((r) => [r.value, r.scans]));
  const known = SCAN_SOURCES.map((source) => ({ value: source, scans: counts.get(source) ?? 0 }));
  const others = rows.filter((r) => r.value === null || !(SCAN_SOURCES as readonly string[]).includes(r.value));
  return [...known, ...others];
}

/** `part` of `total` as a whole percentage for display ("42%"); "—" when there is no total. */
export function percentOf(part: number, total: number): string {
  if (total <= 0) return '—';
  const percent = (part / total) * 100;
  // A single scan among thousands is not 0%.
  return part > 0 && percent < 1 ? '<1%' : `${Math.round(percent)}%`;
}
