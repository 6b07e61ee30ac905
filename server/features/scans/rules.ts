/**
 * Routing-rule evaluation at scan time (DESIGN §3 "Routing rules"). Pure: no I/O, no clock of
 * its own: the caller passes the instant, the visitor and the rules.
 */

export type DeviceType = 'mobile' | 'tablet' | 'desktop' | 'other' | 'unknown';
export type OsFamily = 'ios' | 'android' | 'windows' | 'macos' | 'linux' | 'chromeos' | 'other' | 'unknown';

export interface TimeWindow {
  days: number[]; // 1 = Monday … 7 = Sunday
  start_time: string; // HH:MM
  end_time: string; // HH:MM; before start_time = crosses midnight; equal = the whole day
}

export type RuleConditions =
  | { rule_type: 'time_based'; conditions: { timezone: string; windows: TimeWindow[] } }
  | { rule_type: 'geo_based'; conditions: { countries: string[] } }
  | { rule_type: 'device_based'; conditions: { devices?: string[]; os?: string[] } }
  | { rule_type: 'traffic_split'; conditions: { weight: number } };

export type ScanRule = RuleConditions & {
  id: string;
  function_type: string;
  payload: Record<string, unknown>;
  priority: number;
  enabled: boolean;
  created_at: string;
};

export interface ScanContext {
  /** The scan instant, epoch milliseconds. */
  at: number;
  country: string | null;
  device_type: DeviceType;
  os: OsFamily;
  /** The cookieless daily visitor key. */
  visitor: string;
  /** Identifies the node, so one visitor lands in independent buckets on different nodes. */
  node_id: string;
}

/** Rules in evaluation order: priority ascending, then oldest first (then id, for stability). */
export function orderRules<T extends Pick<ScanRule, 'priority' | 'created_at' | 'id'>>(rules: readonly T[]): T[] {
  return [...rules].sort(
    (a, b) =>
      a.priority - b.priority ||
      (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0) ||
      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

/**
 * A compiled rule set for one node: ordered, disabled rules dropped, split ranges assigned.
 * Compile once per node (the resolver caches it), evaluate per scan.
 */
export interface CompiledRules {
  rules: ReadonlyArray<{ rule: ScanRule; splitFrom: number; splitTo: number }>;
  hasSplit: boolean;
}

export function compileRules(rules: readonly ScanRule[]): CompiledRules {
  let cursor = 0;
  let hasSplit = false;
  const out = orderRules(rules.filter((r) => r.enabled)).map((rule) => {
    if (rule.rule_type !== 'traffic_split') return { rule, splitFrom: 0, splitTo: 0 };
    hasSplit = true;
    const from = cursor;
    cursor = Math.min(100, cursor + Math.max(0, Math.floor(rule.conditions.weight)));
    return { rule, splitFrom: from, splitTo: cursor };
  });
  return { rules: out, hasSplit };
}

/** The first matching rule, or null (serve the node's own payload). */
export function evaluateRules(compiled: CompiledRules, ctx: ScanContext): ScanRule | null {
  let bucket = -1;
  for (const { rule, splitFrom, splitTo } of compiled.rules) {
    switch (rule.rule_type) {
      case 'time_based':
        if (matchesTime(rule.conditions, ctx.at)) return rule;
        break;
      case 'geo_based':
        if (ctx.country !== null && rule.conditions.countries.includes(ctx.country)) return rule;
        break;
      case 'device_based':
        if (matchesDevice(rule.conditions, ctx)) return rule;
        break;
      case 'traffic_split':
        if (bucket < 0) bucket = splitBucket(ctx.visitor, ctx.node_id);
        if (bucket >= splitFrom && bucket < splitTo) return rule;
        break;
    }
  }
  return null;
}

function matchesDevice(c: { devices?: string[]; os?: string[] }, ctx: ScanContext): boolean {
  if (!c.devices && !c.os) return false;
  if (c.devices && !c.devices.includes(ctx.device_type)) return false;
  if (c.os && !c.os.includes(ctx.os)) return false;
  return true;
}

/**
 * A visitor's bucket 0..99 on a node: stable for the visitor key's lifetime (one day), and
 * independent across nodes. The visitor key is already a salted SHA-256, so mixing it with the
 * node id needs no second cryptographic hash (one per scan was ~4 % of the scan path's CPU):
 * FNV-1a over both strings, then MurmurHash3's finalizer so every input bit reaches the low bits.
 */
export function splitBucket(visitor: string, nodeId: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < nodeId.length; i++) h = Math.imul(h ^ nodeId.charCodeAt(i), 0x01000193);
  h = Math.imul(h ^ 0, 0x01000193);
  for (let i = 0; i < visitor.length; i++) h = Math.imul(h ^ visitor.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) % 100;
}

// ---- time windows ---------------------------------------------------------------------------

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
  c: { timezone: string; windows: TimeWindow[] },
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
