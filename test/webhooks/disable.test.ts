import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../server/platform/clock.ts';
import { Receiver, eventually } from '../support/receiver.ts';
import { type ApiResponse, type TestServer, startTestServer } from '../support/server.ts';
import { unlimitedApi } from './helpers.ts';

const HOUR = 3_600_000;

describe('webhook give-up and automatic disabling (injected clock, production schedule)', () => {
  const clock = new ManualClock('2026-11-21T12:00:00.000Z');
  let server: TestServer;
  let api: (method: string, path: string, body?: unknown) => Promise<ApiResponse>;
  let up = false;
  let bad: Receiver;
  let watcher: Receiver;
  beforeAll(async () => {
    server = await startTestServer({ clock });
    api = await unlimitedApi(server);
    bad = await new Receiver(() => (up ? 200 : 500)).listen();
    watcher = await new Receiver().listen();
  });
  afterAll(async () => {
    await server.close();
    await bad.close();
    await watcher.close();
  });

  /** Moves the clock on and lets the dispatcher look at its queues; waits for the receiver to see `n` requests. */
  const advanceUntil = async (n: number, step: number) => {
    clock.advance(step);
    server.running.app.services.webhookDispatcher.wake();
    await bad.waitFor((r) => r.requests.length >= n, 5000, `attempt ${n}`);
    await recorded(n);
  };

  /** Waits until the service has recorded `n` attempts in all (the receiver answers before the record is written). */
  const recorded = (n: number) =>
    eventually(
      async () => {
        const rows = (await api('GET', `/webhooks/${targetId}/deliveries?limit=100`)).body.data as Array<{ attempt_count: number }>;
        return rows.reduce((sum, d) => sum + d.attempt_count, 0) >= n ? true : undefined;
      },
      5000,
      `${n} recorded attempts`,
    );
  let targetId = '';

  it('follows the back-off schedule, gives a message up after 8 attempts, disables the endpoint after 5 days, and resumes in order', async () => {
    const target = (await api('POST', '/webhooks', { url: bad.url, events: ['node.created'] })).body.data;
    targetId = target.id;
    const w = (await api('POST', '/webhooks', { url: watcher.url, events: ['webhook.disabled'] })).body.data;
    expect(w.id).toBeDefined();
    const first = (await api('POST', '/nodes', { label: 'one', function_type: 'redirect', payload: { url: 'https://example.com/1' } })).body.data;
    const second = (await api('POST', '/nodes', { label: 'two', function_type: 'redirect', payload: { url: 'https://example.com/2' } })).body.data;
    const third = (await api('POST', '/nodes', { label: 'three', function_type: 'redirect', payload: { url: 'https://example.com/3' } })).body.data;
    await bad.waitFor((r) => r.requests.length >= 1, 5000, 'the first attempt');

    // Retry delays follow 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h with ±20 % jitter.
    const expected = [5_000, 300_000, 1_800_000, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR];
    for (let i = 0; i < expected.length; i++) {
      const d = await eventually(async () => {
        const row = (await api('GET', `/webhooks/${target.id}/deliveries?limit=100`)).body.data.at(-1);
        return row.attempt_count === i + 1 && row.status === 'pending' ? row : undefined;
      }, 5000, `delivery after attempt ${i + 1}`);
      const delay = Date.parse(d.next_attempt_at) - Date.parse(d.last_attempt_at);
      expect(delay).toBeGreaterThanOrEqual(expected[i]! * 0.8 - 1);
      expect(delay).toBeLessThanOrEqual(expected[i]! * 1.2 + 1);
      // Not due yet: nothing is sent before the scheduled time …
      clock.set(Date.parse(d.next_attempt_at) - 1);
      server.running.app.services.webhookDispatcher.wake();
      await server.running.app.services.webhookDispatcher.idle();
      expect(bad.requests.length).toBe(i + 1);
      // … and it is sent once it is due.
      await advanceUntil(i + 2, 1);
    }
    // 8 attempts: the first message is given up; the second is now the head.
    const gaveUp = await eventually(async () => {
      const row = (await api('GET', `/webhooks/${target.id}/deliveries?limit=100`)).body.data.at(-1);
      return row.status === 'failed' ? row : undefined;
    }, 5000, 'the give-up');
    expect(gaveUp).toMatchObject({ attempt_count: 8, next_attempt_at: null });
    expect(gaveUp.attempts).toHaveLength(8);
    await bad.waitFor((r) => r.requests.length >= 9, 5000, 'the second message');
    expect(JSON.parse(bad.requests[8]!.body).data.id).toBe(second.id);
    expect((await api('GET', `/webhooks/${target.id}`)).body.data).toMatchObject({ active: true, disabled: null });

    // Keep failing until the streak passes 5 days (it started at 12:00 on day 0). 13 h steps
    // cover the longest delay (10 h + 20 %); the second message is given up after 8 attempts too.
    let n = 9;
    while ((await api('GET', `/webhooks/${target.id}`)).body.data.active) {
      await advanceUntil(++n, 13 * HOUR);
      expect(n).toBeLessThan(30);
    }
    const disabled = (await api('GET', `/webhooks/${target.id}`)).body.data;
    expect(disabled.active).toBe(false);
    expect(disabled.disabled).toMatchObject({ note: 'webhook.disabled' });
    expect(Date.parse(disabled.disabled.at) - Date.parse('2026-11-21T12:00:00.000Z')).toBeGreaterThanOrEqual(5 * 24 * HOUR);
    expect(disabled.disabled.reason).toMatch(/HTTP 500/);
    expect(disabled.failing_since).toBe('2026-11-21T12:00:00.000Z');
    // The note also goes out as an event to endpoints that subscribed to it.
    await watcher.waitFor((r) => r.accepted.length >= 1, 5000, 'webhook.disabled');
    expect(JSON.parse(watcher.accepted[0]!.body)).toMatchObject({ type: 'webhook.disabled', data: { id: target.id, active: false } });

    // Disabled: nothing more is attempted, but new events still queue.
    const attemptsWhenDisabled = bad.requests.length;
    const fourth = (await api('POST', '/nodes', { label: 'four', function_type: 'redirect', payload: { url: 'https://example.com/4' } })).body.data;
    clock.advance(13 * HOUR);
    server.running.app.services.webhookDispatcher.wake();
    await server.running.app.services.webhookDispatcher.idle();
    expect(bad.requests.length).toBe(attemptsWhenDisabled);

    // The new event reaches the endpoint's queue through the fan-out, which on PostgreSQL waits
    // for the outbox's commit horizon: wait for it to be queued rather than for one idle pass.
    const rows = await eventually(async () => {
      server.running.app.services.webhookDispatcher.wake();
      await server.running.app.services.webhookDispatcher.idle();
      const listed = (await api('GET', `/webhooks/${target.id}/deliveries?limit=100`)).body.data.reverse();
      return listed.length === 4 ? listed : undefined;
    }, 30_000, 'the fourth event queued');
    expect(rows.map((d: { status: string }) => d.status)).toEqual(['failed', 'failed', 'pending', 'pending']);

    // Fixed receiver: redeliver the given-up messages, re-enable; everything arrives in order.
    up = true;
    for (const d of rows.slice(0, 2)) expect((await api('POST', `/webhooks/${target.id}/deliveries/${d.id}/redeliver`)).status).toBe(202);
    await server.running.app.services.webhookDispatcher.idle(); // the redelivery woke it
    expect(bad.requests.length).toBe(attemptsWhenDisabled); // still disabled
    expect((await api('PATCH', `/webhooks/${target.id}`, { active: true })).body.data).toMatchObject({ active: true, disabled: null, failing_since: null });
    await bad.waitFor((r) => r.accepted.length >= 4, 5000, 'the four messages');
    expect(bad.accepted.map((r) => JSON.parse(r.body).data.id)).toEqual([first.id, second.id, third.id, fourth.id]);

    // Finished deliveries are kept 30 days, then forgotten (pending ones never are).
    await recorded(attemptsWhenDisabled + 4);
    clock.advance(29 * 24 * HOUR);
    server.running.app.services.webhookDispatcher.wake();
    await server.running.app.services.webhookDispatcher.idle();
    expect((await api('GET', `/webhooks/${target.id}/deliveries`)).body.total).toBe(4);
    clock.advance(2 * 24 * HOUR);
    server.running.app.services.webhookDispatcher.wake();
    await eventually(async () => ((await api('GET', `/webhooks/${target.id}/deliveries`)).body.total === 0 ? true : undefined), 5000, 'the prune');
  });
});
