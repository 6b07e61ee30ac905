import { describe, expect, it } from 'vitest';
import { compileRules, evaluateRules, orderRules, type ScanContext, type ScanRule } from './rules.ts';
import { matchesTime } from '../../ruleTypes/time_based/index.ts';
import { splitBucket } from '../../ruleTypes/traffic_split/index.ts';

let n = 0;
function rule(partial: Partial<ScanRule> & Pick<ScanRule, 'rule_type' | 'conditions'>): ScanRule {
  n++;
  return {
    id: `r${n}`,
    function_type: 'redirect',
    payload: { url: `https://example.com/${n}` },
    priority: 0,
    enabled: true,
    created_at: `2026-01-01T00:00:${String(n % 60).padStart(2, '0')}.000Z`,
    ...partial,
  } as ScanRule;
}

const ctx = (over: Partial<ScanContext> = {}): ScanContext => ({
  at: Date.parse('2026-11-23T10:00:00Z'), // a Monday
  country: 'FR',
  device_type: 'mobile',
  os: 'ios',
  visitor: 'visitor-1',
  node_id: 'node-1',
  ...over,
});

describe('time_based', () => {
  const weekdays9to17Paris = { timezone: 'Europe/Paris', windows: [{ days: [1, 2, 3, 4, 5], start_time: '09:00', end_time: '17:00' }] };

  it('uses the rule zone, Monday = 1, end exclusive', () => {
    // Monday 2026-11-23, Paris is UTC+1 in winter
    expect(matchesTime(weekdays9to17Paris, Date.parse('2026-11-23T07:59:00Z'))).toBe(false); // 08:59 Paris
    expect(matchesTime(weekdays9to17Paris, Date.parse('2026-11-23T08:00:00Z'))).toBe(true); // 09:00
    expect(matchesTime(weekdays9to17Paris, Date.parse('2026-11-23T15:59:00Z'))).toBe(true); // 16:59
    expect(matchesTime(weekdays9to17Paris, Date.parse('2026-11-23T16:00:00Z'))).toBe(false); // 17:00
    // Sunday 2026-11-22 12:00 Paris
    expect(matchesTime(weekdays9to17Paris, Date.parse('2026-11-22T11:00:00Z'))).toBe(false);
  });

  it('follows daylight-saving changes (Europe/Paris, last Sunday of March and October)', () => {
    // Friday 2026-03-27, before the change: UTC+1 → 08:00Z is 09:00 local
    expect(matchesTime(weekdays9to17Paris, Date.parse('2026-03-27T08:00:00Z'))).toBe(true);
    expect(matchesTime(weekdays9to17Paris, Date.parse('2026-03-27T07:30:00Z'))).toBe(false);
    // Monday 2026-03-30, after the change: UTC+2 → 07:00Z is already 09:00 local
    expect(matchesTime(weekdays9to17Paris, Date.parse('2026-03-30T07:00:00Z'))).toBe(true);
    expect(matchesTime(weekdays9to17Paris, Date.parse('2026-03-30T06:59:00Z'))).toBe(false);
    expect(matchesTime(weekdays9to17Paris, Date.parse('2026-03-30T15:00:00Z'))).toBe(false); // 17:00 local
    // Monday 2026-10-26, back to UTC+1
    expect(matchesTime(weekdays9to17Paris, Date.parse('2026-10-26T07:30:00Z'))).toBe(false); // 08:30 local
    expect(matchesTime(weekdays9to17Paris, Date.parse('2026-10-26T15:30:00Z'))).toBe(true); // 16:30 local
  });

  it('handles the skipped and the repeated hour on the night of the change', () => {
    const night = { timezone: 'America/New_York', windows: [{ days: [7], start_time: '01:30', end_time: '02:30' }] };
    // 2026-11-01 (Sunday) 01:30 happens twice in New York: at 05:30Z (EDT) and 06:30Z (EST)
    expect(matchesTime(night, Date.parse('2026-11-01T05:30:00Z'))).toBe(true);
    expect(matchesTime(night, Date.parse('2026-11-01T06:30:00Z'))).toBe(true);
    expect(matchesTime(night, Date.parse('2026-11-01T07:30:00Z'))).toBe(false); // 02:30 EST
    // 2026-03-08 (Sunday): 02:00–03:00 does not exist; 01:59 EST is 06:59Z, next minute is 03:00 EDT
    expect(matchesTime(night, Date.parse('2026-03-08T06:45:00Z'))).toBe(true); // 01:45 EST
    expect(matchesTime(night, Date.parse('2026-03-08T07:00:00Z'))).toBe(false); // 03:00 EDT
  });

  it('windows that cross midnight belong to the day they start on', () => {
    const fridayNight = { timezone: 'UTC', windows: [{ days: [5], start_time: '22:00', end_time: '02:00' }] };
    expect(matchesTime(fridayNight, Date.parse('2026-11-27T21:59:00Z'))).toBe(false); // Fri 21:59
    expect(matchesTime(fridayNight, Date.parse('2026-11-27T22:00:00Z'))).toBe(true); // Fri 22:00
    expect(matchesTime(fridayNight, Date.parse('2026-11-28T01:59:00Z'))).toBe(true); // Sat 01:59
    expect(matchesTime(fridayNight, Date.parse('2026-11-28T02:00:00Z'))).toBe(false); // Sat 02:00
    expect(matchesTime(fridayNight, Date.parse('2026-11-27T01:00:00Z'))).toBe(false); // Fri 01:00 (Thursday's night: not listed)
    const sundayNight = { timezone: 'UTC', windows: [{ days: [7], start_time: '23:00', end_time: '01:00' }] };
    expect(matchesTime(sundayNight, Date.parse('2026-11-30T00:30:00Z'))).toBe(true); // Monday 00:30 belongs to Sunday
  });

  it('start equal to end is the whole day; links such as Asia/Calcutta work', () => {
    const allMonday = { timezone: 'Asia/Calcutta', windows: [{ days: [1], start_time: '00:00', end_time: '00:00' }] };
    // Monday 2026-11-23 00:00 IST = Sunday 18:30Z
    expect(matchesTime(allMonday, Date.parse('2026-11-22T18:30:00Z'))).toBe(true);
    expect(matchesTime(allMonday, Date.parse('2026-11-22T18:29:00Z'))).toBe(false);
    expect(matchesTime(allMonday, Date.parse('2026-11-23T18:29:00Z'))).toBe(true);
  });
});

describe('geo_based and device_based', () => {
  it('matches listed countries; an unknown country matches no geo rule', () => {
    const c = compileRules([rule({ rule_type: 'geo_based', conditions: { countries: ['FR', 'BE'] } })]);
    expect(evaluateRules(c, ctx({ country: 'BE' }))?.rule_type).toBe('geo_based');
    expect(evaluateRules(c, ctx({ country: 'DE' }))).toBeNull();
    expect(evaluateRules(c, ctx({ country: null }))).toBeNull();
  });

  it('devices and os both have to match when both are set; unknown devices match nothing', () => {
    const mobileIos = compileRules([rule({ rule_type: 'device_based', conditions: { devices: ['mobile'], os: ['ios'] } })]);
    expect(evaluateRules(mobileIos, ctx())).not.toBeNull();
    expect(evaluateRules(mobileIos, ctx({ os: 'android' }))).toBeNull();
    expect(evaluateRules(mobileIos, ctx({ device_type: 'tablet' }))).toBeNull();
    const desktops = compileRules([rule({ rule_type: 'device_based', conditions: { devices: ['desktop'] } })]);
    expect(evaluateRules(desktops, ctx({ device_type: 'unknown', os: 'unknown' }))).toBeNull();
    const android = compileRules([rule({ rule_type: 'device_based', conditions: { os: ['android'] } })]);
    expect(evaluateRules(android, ctx({ device_type: 'tablet', os: 'android' }))).not.toBeNull();
    expect(evaluateRules(android, ctx({ device_type: 'unknown', os: 'unknown' }))).toBeNull();
  });
});

describe('traffic_split', () => {
  it('gives each rule its share of visitors, the rest falls through to the node', () => {
    const a = rule({ rule_type: 'traffic_split', conditions: { weight: 20 } });
    const b = rule({ rule_type: 'traffic_split', conditions: { weight: 30 } });
    const c = compileRules([a, b]);
    const hits = { a: 0, b: 0, none: 0 };
    const N = 20_000;
    for (let i = 0; i < N; i++) {
      const r = evaluateRules(c, ctx({ visitor: `v${i}` }));
      if (r === null) hits.none++;
      else if (r.id === a.id) hits.a++;
      else hits.b++;
    }
    // Binomial standard deviation at N = 20000 is about 0.3 percentage points: allow ±1.5.
    expect(Math.abs(hits.a / N - 0.2)).toBeLessThan(0.015);
    expect(Math.abs(hits.b / N - 0.3)).toBeLessThan(0.015);
    expect(Math.abs(hits.none / N - 0.5)).toBeLessThan(0.015);
  });

  it('is sticky for one visitor and independent across nodes', () => {
    const c = compileRules([rule({ rule_type: 'traffic_split', conditions: { weight: 50 } })]);
    for (let i = 0; i < 200; i++) {
      const first = evaluateRules(c, ctx({ visitor: `sticky${i}` }));
      for (let k = 0; k < 5; k++) expect(evaluateRules(c, ctx({ visitor: `sticky${i}`, at: ctx().at + k * 3_600_000 }))).toBe(first);
    }
    let same = 0;
    for (let i = 0; i < 2000; i++) if ((splitBucket(`v${i}`, 'node-1') < 50) === (splitBucket(`v${i}`, 'node-2') < 50)) same++;
    expect(same / 2000).toBeGreaterThan(0.4);
    expect(same / 2000).toBeLessThan(0.6);
  });

  it('weights summing to 100 leave nobody for the node payload', () => {
    const c = compileRules([
      rule({ rule_type: 'traffic_split', conditions: { weight: 60 } }),
      rule({ rule_type: 'traffic_split', conditions: { weight: 40 } }),
    ]);
    for (let i = 0; i < 1000; i++) expect(evaluateRules(c, ctx({ visitor: `w${i}` }))).not.toBeNull();
  });
});

describe('priority', () => {
  it('tries rules by priority, ties by age, skips disabled rules', () => {
    const geoLater = rule({ rule_type: 'geo_based', conditions: { countries: ['FR'] }, priority: 5, created_at: '2026-01-01T00:00:00.000Z' });
    const deviceFirst = rule({ rule_type: 'device_based', conditions: { devices: ['mobile'] }, priority: 1, created_at: '2026-06-01T00:00:00.000Z' });
    const disabled = rule({ rule_type: 'geo_based', conditions: { countries: ['FR'] }, priority: 0, enabled: false });
    expect(evaluateRules(compileRules([geoLater, deviceFirst, disabled]), ctx())?.id).toBe(deviceFirst.id);

    const older = rule({ rule_type: 'geo_based', conditions: { countries: ['FR'] }, priority: 3, created_at: '2026-01-01T00:00:00.000Z' });
    const newer = rule({ rule_type: 'geo_based', conditions: { countries: ['FR'] }, priority: 3, created_at: '2026-02-01T00:00:00.000Z' });
    expect(evaluateRules(compileRules([newer, older]), ctx())?.id).toBe(older.id);
    expect(orderRules([newer, older]).map((r) => r.id)).toEqual([older.id, newer.id]);

    expect(evaluateRules(compileRules([disabled]), ctx())).toBeNull();
    expect(evaluateRules(compileRules([]), ctx())).toBeNull();
  });

  it('a later rule serves when earlier ones do not match', () => {
    const geo = rule({ rule_type: 'geo_based', conditions: { countries: ['JP'] }, priority: 0 });
    const time = rule({ rule_type: 'time_based', conditions: { timezone: 'UTC', windows: [{ days: [1], start_time: '09:00', end_time: '11:00' }] }, priority: 1 });
    expect(evaluateRules(compileRules([geo, time]), ctx())?.id).toBe(time.id);
  });
});
