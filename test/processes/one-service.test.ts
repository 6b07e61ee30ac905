import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Receiver } from '../support/receiver.ts';
import { type ApiResponse } from '../support/server.ts';
import { ServeOnPostgresUnavailable, type ServiceProcesses, startServiceProcesses } from '../support/processes.ts';
import { needs } from '../support/system.ts';

const pgSkip = needs.postgres();

// Three real `waymark serve --database …` processes on one PostgreSQL database behind a
// round-robin TCP proxy (issue 19: many processes are one service).

/** Attempt timeout of the processes: a sender claim lasts twice as long (docs/webhooks.md). */
const TIMEOUT_MS = 10_000;

describe.skipIf(pgSkip !== null)(`three serve processes on one PostgreSQL database${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, () => {
  let cluster: ServiceProcesses | undefined;
  let unavailable: string | undefined;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    try {
      cluster = await startServiceProcesses(3, { args: ['--webhook-timeout-ms', String(TIMEOUT_MS)] });
    } catch (err) {
      if (!(err instanceof ServeOnPostgresUnavailable)) throw err;
      unavailable = err.message;
    }
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
    await Promise.all(receivers.map((r) => r.close()));
  });

  const remaining = (res: ApiResponse) => Number(res.headers.get('x-ratelimit-remaining'));

  it('refuses the 101st standard request of a minute whichever process answers, and the headers count every process', { timeout: 120_000 }, async (ctx) => {
    ctx.skip(unavailable !== undefined, unavailable);
    const c = cluster!;
    const key = await c.createKey('developer');
    // Start with at least 40 s left in the minute: the test must not cross into the next window.
    while (60_000 - (Date.now() % 60_000) < 40_000) await sleep(250);
    const before = c.proxy.assigned.length;
    const accepted: ApiResponse[] = [];
    let refused: ApiResponse | undefined;
    while (!refused) {
      const res = await c.api('GET', '/webhooks?limit=1', undefined, { key });
      if (res.status === 200) {
        accepted.push(res);
      } else if (res.status === 429 && res.headers.get('retry-after') === '1' && remaining(res) > 0) {
        // The burst cap (20 a second): wait for the next second, which charged nothing.
        const second = Math.floor(Date.now() / 1000);
        while (Math.floor(Date.now() / 1000) === second) await sleep(20);
      } else {
        refused = res;
      }
    }
    expect(accepted).toHaveLength(100);
    // One count across the processes: 99, 98, … 0, each once, in the order the requests were made.
    expect(accepted.map(remaining)).toEqual(Array.from({ length: 100 }, (_, i) => 99 - i));
    expect(new Set(accepted.map((r) => r.headers.get('x-ratelimit-reset'))).size).toBe(1);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-limit')).toBe('100');
    expect(remaining(refused)).toBe(0);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(1);
    // The requests were spread over all three processes, and each of them now refuses the key.
    expect(new Set(c.proxy.assigned.slice(before))).toEqual(new Set([0, 1, 2]));
    for (const p of c.processes) expect((await c.api('GET', '/webhooks?limit=1', undefined, { key, base: p.url })).status).toBe(429);
  });

  it('delivers each webhook event once, in order, whichever process recorded it', { timeout: 120_000 }, async (ctx) => {
    ctx.skip(unavailable !== undefined, unavailable);
    const c = cluster!;
    const key = await c.createKey('enterprise');
    const receiver = await new Receiver().listen();
    receivers.push(receiver);
    const created = await c.api('POST', '/webhooks', { url: receiver.url, events: ['node.created'] }, { key });
    expect(created.status).toBe(201);
    const hook = created.body.data.id as string;
    const before = c.proxy.assigned.length;
    // Node events and test events, one request each, spread over the processes: what each
    // receiver request must be, in order (a node by its id, a test event by its webhook-id).
    const expected: string[] = [];
    for (let i = 0; i < 12; i++) {
      if (i % 2 === 0) {
        const res = await c.api('POST', '/nodes', { label: `n${i}`, function_type: 'redirect', payload: { url: `https://example.com/${i}` } }, { key });
        expect(res.status).toBe(201);
        expected.push(`node ${res.body.data.id}`);
      } else {
        const res = await c.api('POST', `/webhooks/${hook}/test`, undefined, { key });
        expect(res.status).toBe(202);
        expected.push(`test ${res.body.data.event_id}`);
      }
    }
    expect(new Set(c.proxy.assigned.slice(before))).toEqual(new Set([0, 1, 2]));

    await receiver.waitFor((r) => r.accepted.length >= 12, 60_000, 'twelve deliveries');
    // Every delivery recorded as done after one attempt, and no attempt still in flight anywhere …
    const deliveries = async () => (await c.api('GET', `/webhooks/${hook}/deliveries?limit=100`, undefined, { key })).body.data as Array<{ status: string; attempt_count: number }>;
    await eventually(async () => (await deliveries()).every((d) => d.status === 'succeeded'), 'every delivery recorded');
    expect((await deliveries()).map((d) => d.attempt_count)).toEqual(Array(12).fill(1));
    await eventually(async () => (await claimsHeld(c.databaseUrl)) === 0, 'no sender claim held');
    // … so the receiver's requests are all there is: each event once, in the order recorded.
    const got = receiver.requests.map((r) => {
      const body = JSON.parse(r.body) as { type: string; data: { id: string } };
      return body.type === 'node.created' ? `node ${body.data.id}` : `test ${String(r.headers['webhook-id'])}`;
    });
    expect(got).toEqual(expected);
    expect(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size).toBe(12);
  });

  it('a process killed mid-attempt: another process sends the delivery again under the same webhook-id', { timeout: 120_000 }, async (ctx) => {
    ctx.skip(unavailable !== undefined, unavailable);
    const c = cluster!;
    const key = await c.createKey('enterprise');
    let holding = true;
    const receiver = await new Receiver(async () => {
      if (holding) await new Promise<never>(() => {}); // never answers: the sender is killed meanwhile
      return 204;
    }).listen();
    receivers.push(receiver);
    const hook = (await c.api('POST', '/webhooks', { url: receiver.url, events: ['node.created'] }, { key })).body.data.id as string;
    const first = (await c.api('POST', `/webhooks/${hook}/test`, undefined, { key })).body.data.event_id as string;
    await receiver.waitFor((r) => r.requests.length >= 1, 30_000, 'the first attempt');

    // The process holding the endpoint's claim is the one sending: kill it mid-attempt.
    const owner = await eventually(() => claimOwner(c.databaseUrl, hook), 'the sender claim');
    const pid = Number(owner.split(':').at(-2));
    const victim = c.processes.find((p) => p.child.pid === pid);
    expect(victim).toBeDefined();
    await victim!.kill();
    holding = false;

    // A survivor records the next event; its dispatcher finds the head claimed by the dead
    // process and retries it once the claim expires, then sends the new event.
    const survivor = c.processes.find((p) => p !== victim)!;
    const second = (await c.api('POST', `/webhooks/${hook}/test`, undefined, { key, base: survivor.url })).body.data.event_id as string;
    await receiver.waitFor((r) => r.accepted.length >= 2, 4 * TIMEOUT_MS + 30_000, 'the retry and the next event');
    expect(receiver.requests.map((r) => r.headers['webhook-id'])).toEqual([first, first, second]);
    expect(receiver.accepted.map((r) => r.headers['webhook-id'])).toEqual([first, second]);
    const list = (await c.api('GET', `/webhooks/${hook}/deliveries?limit=10`, undefined, { key, base: survivor.url })).body.data as Array<{ event_id: string; status: string; attempt_count: number }>;
    // The dead process's attempt was never recorded: one attempt each, both succeeded.
    expect(list.map((d) => [d.event_id, d.status, d.attempt_count])).toEqual([
      [second, 'succeeded', 1],
      [first, 'succeeded', 1],
    ]);
  });
});

async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

async function query<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** Sender claims not yet released or expired. */
async function claimsHeld(url: string): Promise<number> {
  const rows = await query<{ n: number }>(url, 'SELECT count(*)::int AS n FROM webhook_claims WHERE claimed_until > $1', [new Date().toISOString()]);
  return rows[0]!.n;
}

async function claimOwner(url: string, webhookId: string): Promise<string | undefined> {
  const rows = await query<{ owner: string }>(url, 'SELECT owner FROM webhook_claims WHERE webhook_id = $1 AND claimed_until > $2', [webhookId, new Date().toISOString()]);
  return rows[0]?.owner;
}
