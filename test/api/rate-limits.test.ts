import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../server/platform/clock.ts';
import { expectError } from '../support/fixtures.ts';
import { type ApiResponse, type TestServer, startTestServer } from '../support/server.ts';

// Developer plan (spec "Limits"): 100 standard requests a minute, at most 20 in one second,
// and a separate 10 batch operations a minute. Fixed one-minute windows on the app's clock.
describe('rate limits (developer plan, manual clock)', () => {
  let server: TestServer;
  let clock: ManualClock;
  let key: string;
  // Each test starts at the top of its own minute, with a fresh developer key.
  let minute = 0;
  const start = Date.parse('2026-11-21T12:00:00.000Z');

  beforeAll(async () => {
    clock = new ManualClock(start);
    server = await startTestServer({ clock });
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(async () => {
    minute += 2;
    clock.set(start + minute * 60_000);
    key = (await server.running.app.services.keys.createKey(server.orgId, `rl-${minute}`, 'developer')).apiKey;
  });

  const get = (k = key) => server.api('GET', '/nodes?limit=1', undefined, k);
  const batch = (k = key) => server.api('POST', '/batches', { label: 'b', prefix: 'RL', quantity: 1, function_type: 'redirect' }, k);
  const headers = (res: ApiResponse) => ({
    limit: res.headers.get('x-ratelimit-limit'),
    remaining: res.headers.get('x-ratelimit-remaining'),
    reset: res.headers.get('x-ratelimit-reset'),
    retryAfter: res.headers.get('retry-after'),
  });
  const windowEnd = () => String(Math.floor(clock.now() / 60_000) * 60 + 60);

  it('every response carries X-RateLimit-Limit/Remaining/Reset for the per-minute budget', async () => {
    const first = await get();
    expect(first.status).toBe(200);
    expect(headers(first)).toEqual({ limit: '100', remaining: '99', reset: windowEnd(), retryAfter: null });
    const second = await get();
    expect(headers(second).remaining).toBe('98');
    // Errors after authentication count and carry the headers too.
    const missing = await server.api('GET', '/nodes/ZZZZZZZZ', undefined, key);
    expect(missing.status).toBe(404);
    expect(headers(missing).remaining).toBe('97');
  });

  it('burst: the 21st request in one second is 429 with the spec body and Retry-After 1', async () => {
    for (let i = 0; i < 20; i++) expect((await get()).status).toBe(200);
    const res = await get();
    expectError(res, 429, 'Rate limit exceeded. Retry after 1 seconds.');
    expect(headers(res)).toMatchObject({ limit: '100', retryAfter: '1', reset: windowEnd() });
    expect(Number(headers(res).remaining)).toBe(80);
    clock.advance(1000);
    expect((await get()).status).toBe(200);
  });

  it('rejected requests do not consume budget: burst 429s leave the minute budget intact', async () => {
    for (let i = 0; i < 20; i++) expect((await get()).status).toBe(200);
    for (let i = 0; i < 15; i++) expect((await get()).status).toBe(429);
    // 80 more fit in the minute, 20 a second.
    let accepted = 0;
    for (let s = 1; s <= 4; s++) {
      clock.advance(1000);
      for (let i = 0; i < 20; i++) {
        const res = await get();
        expect(res.status).toBe(200);
        accepted++;
        expect(Number(headers(res).remaining)).toBe(100 - 20 - accepted);
      }
    }
    expect(accepted).toBe(80);
  });

  it('100 a minute: then 429 with Retry-After up to the window end; the next window is fresh', async () => {
    for (let s = 0; s < 5; s++) {
      for (let i = 0; i < 20; i++) expect((await get()).status).toBe(200);
      clock.advance(1000);
    }
    clock.advance(10_500); // 15.5 s into the minute
    const res = await get();
    expectError(res, 429, 'Rate limit exceeded. Retry after 45 seconds.');
    expect(headers(res)).toEqual({ limit: '100', remaining: '0', reset: windowEnd(), retryAfter: '45' });
    // Retry-After is an integer ≥ 1 even in the window's last millisecond.
    clock.set(Math.floor(clock.now() / 60_000) * 60_000 + 59_999);
    const last = await get();
    expect(last.status).toBe(429);
    expect(headers(last).retryAfter).toBe('1');
    clock.advance(1);
    const fresh = await get();
    expect(fresh.status).toBe(200);
    expect(headers(fresh)).toMatchObject({ limit: '100', remaining: '99', reset: windowEnd() });
  });

  it('POST /batches counts only against the batch budget (10 a minute), not the standard or burst budgets', async () => {
    const firstBatch = await batch();
    expect(firstBatch.status).toBe(201);
    expect(headers(firstBatch)).toEqual({ limit: '10', remaining: '9', reset: windowEnd(), retryAfter: null });
    for (let i = 0; i < 9; i++) expect((await batch()).status).toBe(201);
    const over = await batch();
    expectError(over, 429, /^Rate limit exceeded\. Retry after \d+ seconds\.$/);
    expect(headers(over)).toMatchObject({ limit: '10', remaining: '0' });
    expect(Number(headers(over).retryAfter)).toBe(60);
    // The same second still has the full burst and minute budget for standard requests.
    const std = await get();
    expect(std.status).toBe(200);
    expect(headers(std)).toMatchObject({ limit: '100', remaining: '99' });
    for (let i = 0; i < 19; i++) expect((await get()).status).toBe(200);
    expect((await get()).status).toBe(429);
    // And a batch 429 did not consume anything either: next minute, 10 again.
    clock.advance(60_000);
    expect(headers(await batch())).toMatchObject({ limit: '10', remaining: '9' });
  });

  it('an exhausted standard budget does not block batch creation', async () => {
    for (let s = 0; s < 5; s++) {
      for (let i = 0; i < 20; i++) await get();
      clock.advance(1000);
    }
    expect((await get()).status).toBe(429);
    expect((await batch()).status).toBe(201);
  });

  it('limits are per key', async () => {
    const other = (await server.running.app.services.keys.createKey(server.orgId, `rl-other-${minute}`, 'developer')).apiKey;
    for (let i = 0; i < 20; i++) await get();
    expect((await get()).status).toBe(429);
    const res = await get(other);
    expect(res.status).toBe(200);
    expect(headers(res).remaining).toBe('99');
  });

  it('the pro plan allows 500 a minute, 100 a second and 50 batches', async () => {
    const pro = (await server.running.app.services.keys.createKey(server.orgId, `rl-pro-${minute}`, 'pro')).apiKey;
    const first = await get(pro);
    expect(headers(first)).toMatchObject({ limit: '500', remaining: '499' });
    for (let i = 0; i < 99; i++) expect((await get(pro)).status).toBe(200);
    expect((await get(pro)).status).toBe(429);
    expect(headers(await batch(pro))).toMatchObject({ limit: '50', remaining: '49' });
  });
});
