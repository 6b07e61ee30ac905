// The scans helper's analytics answer is read leniently: a time series (an array of points with a
// time and a count) and optional breakdowns (by device, OS, country …) as maps or arrays.

export interface Point {
  label: string;
  time: string;
  count: number;
}

export interface Breakdown {
  title: string;
  rows: { key: string; count: number }[];
}

const TIME_KEYS = ['bucket', 'start', 'time', 't', 'period', 'date', 'timestamp', 'from'];
const COUNT_KEYS = ['count', 'scans', 'total', 'value', 'n'];

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function pick(o: Record<string, unknown>, keys: string[]): unknown {
  for (const k of keys) if (k in o) return o[k];
  return undefined;
}

function asSeries(v: unknown): Point[] | null {
  if (!Array.isArray(v) || v.length === 0 || !v.every(isRecord)) return null;
  const points: Point[] = [];
  for (const item of v) {
    const time = pick(item, TIME_KEYS);
    const count = pick(item, COUNT_KEYS);
    if (typeof time !== 'string' || typeof count !== 'number') return null;
    points.push({ time, count, label: time });
  }
  return points;
}

function asRows(v: unknown): { key: string; count: number }[] | null {
  if (isRecord(v)) {
    const rows = Object.entries(v).filter((e): e is [string, number] => typeof e[1] === 'number');
    return rows.length === Object.keys(v).length ? rows.map(([key, count]) => ({ key, count })) : null;
  }
  if (Array.isArray(v) && v.every(isRecord)) {
    const rows: { key: string; count: number }[] = [];
    for (const item of v) {
      const count = pick(item, COUNT_KEYS);
      const key = Object.entries(item).find(([k, x]) => typeof x === 'string' && !COUNT_KEYS.includes(k))?.[1];
      if (typeof count !== 'number' || typeof key !== 'string') return null;
      rows.push({ key, count });
    }
    return rows;
  }
  return null;
}

export function readAnalytics(data: unknown): { series: Point[]; breakdowns: Breakdown[]; total: number | null } {
  let series: Point[] = [];
  const breakdowns: Breakdown[] = [];
  let total: number | null = null;
  const direct = asSeries(data);
  if (direct) return { series: direct, breakdowns, total: direct.reduce((s, p) => s + p.count, 0) };
  if (isRecord(data)) {
    for (const [key, value] of Object.entries(data)) {
      if (typeof value === 'number' && /^(total|scans|scan_count|count|total_scans)$/.test(key)) total = value;
      const s = asSeries(value);
      if (s && series.length === 0) {
        series = s;
        continue;
      }
      const rows = asRows(value);
      if (rows && rows.length > 0 && key !== 'totals') breakdowns.push({ title: key.replace(/^by_/, '').replace(/_/g, ' '), rows: rows.sort((a, b) => b.count - a.count) });
      if (isRecord(value) && key === 'totals' && typeof value.scans === 'number') total = value.scans;
    }
  }
  if (total === null && series.length > 0) total = series.reduce((s, p) => s + p.count, 0);
  return { series, breakdowns, total };
}

export function scanField(scan: Record<string, unknown>, ...keys: string[]): string {
  for (const k of keys) {
    const v = scan[k];
    if (v !== undefined && v !== null && v !== '') return typeof v === 'boolean' ? (v ? 'yes' : 'no') : String(v);
  }
  return '—';
}
