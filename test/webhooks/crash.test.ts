import { rmSync } from 'node:fs';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { Receiver, eventually } from '../support/receiver.ts';
import { type ServerProcess, apiRequest, spawnServer, tempDataDir } from '../support/server.ts';

describe('webhook delivery across a crash (SIGKILL of the real CLI server)', () => {
  const dataDir = tempDataDir('waymark-webhook-crash-');
  let proc: ServerProcess | undefined;
  let receiver: Receiver | undefined;
  afterAll(async () => {
    await proc?.kill();
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('loses nothing and sends nothing under a new id when killed in the middle of back-off', { timeout: 60_000 }, async () => {
    // Retries after ~50 ms, ~3 s, ~18 s … (the production schedule scaled down by 100).
    const env = { WAYMARK_WEBHOOK_RETRY_BASE_MS: '50' };
    let up = false;
    receiver = await new Receiver(() => (up ? 200 : 503)).listen();

    proc = await spawnServer(dataDir, [], env);
    const apiKey = await eventually(() => /(wmk_[A-Za-z0-9]+)/.exec(proc!.output())?.[1], 5000, 'the first API key');
    const api = (method: string, path: string, body?: unknown) => apiRequest(proc!.url, method, path, body, apiKey);

    const created = await api('POST', '/webhooks', { url: receiver.url, events: ['node.created'] });
    expect(created.status).toBe(201);
    const { id: webhookId, secret } = created.body.data;
    const nodeIds: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await api('POST', '/nodes', { label: `crash-${i}`, function_type: 'redirect', payload: { url: `https://example.com/${i}` } });
      expect(res.status).toBe(201);
      nodeIds.push(res.body.data.id);
    }
    // Two failed attempts of the queue head: the server is now backing off (next try ~3 s away).
    await receiver.waitFor((r) => r.requests.length >= 2, 10_000, 'two failed attempts');
    // All eight queued (on PostgreSQL the fan-out may be a look behind the head's attempts).
    const queued = await eventually(async () => {
      const list = (await api('GET', `/webhooks/${webhookId}/deliveries?limit=100`)).body;
      return list.total === 8 ? list : undefined;
    }, 10_000, 'eight queued deliveries');
    expect(queued.total).toBe(8);
    const eventIds: string[] = queued.data.map((d: { event_id: string }) => d.event_id).reverse();
    expect(queued.data.every((d: { status: string }) => d.status === 'pending')).toBe(true);

    await proc.kill();
    const failedBefore = receiver.requests.length;
    expect(receiver.accepted).toHaveLength(0);
    up = true;

    proc = await spawnServer(dataDir, [], env);
    await receiver.waitFor((r) => r.accepted.length >= 8, 30_000, 'all eight deliveries after the restart');

    const all = receiver.requests;
    // Every request, before and after the crash, carried one of the original event ids …
    for (const req of all) expect(eventIds).toContain(req.headers['webhook-id']);
    // … the failed attempts were all the queue head …
    expect(new Set(all.slice(0, failedBefore).map((r) => r.headers['webhook-id']))).toEqual(new Set([eventIds[0]]));
    // … and after the restart each event arrived exactly once, in order, verifiably signed.
    const accepted = receiver.accepted.map((r) => {
      const body = new StandardWebhook(secret).verify(r.body, r.headers as Record<string, string>) as { type: string; data: { id: string } };
      return { id: r.headers['webhook-id'], node: body.data.id };
    });
    expect(accepted.map((a) => a.id)).toEqual(eventIds);
    expect(accepted.map((a) => a.node)).toEqual(nodeIds);
    expect(all.length).toBe(failedBefore + 8);

    const after = (await api('GET', `/webhooks/${webhookId}/deliveries?limit=100`)).body;
    expect(after.total).toBe(8);
    expect(after.data.every((d: { status: string }) => d.status === 'succeeded')).toBe(true);
    expect(after.data.at(-1).attempt_count).toBe(failedBefore + 1);
  });

  it('a delivery in flight when the server is killed is sent again after the restart, under the same id', { timeout: 60_000 }, async () => {
    const dir = tempDataDir('waymark-webhook-crash2-');
    let holding = true;
    let release: (() => void) | undefined;
    const r = await new Receiver(async () => {
      if (holding) await new Promise<void>((resolve) => (release = resolve));
      return 204;
    }).listen();
    // On PostgreSQL the restarted process first waits out the killed one's sender claim (twice
    // the attempt timeout, docs/webhooks.md): a short timeout keeps that short.
    const env = { WAYMARK_WEBHOOK_TIMEOUT_MS: '3000' };
    let p = await spawnServer(dir, [], env);
    try {
      const apiKey = await eventually(() => /(wmk_[A-Za-z0-9]+)/.exec(p.output())?.[1], 5000, 'the first API key');
      const api = (method: string, path: string, body?: unknown) => apiRequest(p.url, method, path, body, apiKey);
      const { secret } = (await api('POST', '/webhooks', { url: r.url, events: ['node.created'] })).body.data;
      const a = (await api('POST', '/nodes', { label: 'a', function_type: 'redirect', payload: { url: 'https://example.com/a' } })).body.data;
      const b = (await api('POST', '/nodes', { label: 'b', function_type: 'redirect', payload: { url: 'https://example.com/b' } })).body.data;
      await r.waitFor((x) => x.requests.length >= 1, 10_000, 'the first request to be in flight');
      await p.kill(); // the receiver has the request; the server never learns the answer
      holding = false;
      release?.();

      p = await spawnServer(dir, [], env);
      await r.waitFor((x) => x.accepted.length >= 3, 20_000, 'the resend and the second event');
      const got = r.accepted.map((q) => ({
        id: q.headers['webhook-id'],
        node: (new StandardWebhook(secret).verify(q.body, q.headers as Record<string, string>) as { data: { id: string } }).data.id,
      }));
      // At least once: the first event twice (the in-flight answer was lost), with the same id; then the second.
      expect(got.map((g) => g.node)).toEqual([a.id, a.id, b.id]);
      expect(got[0]!.id).toBe(got[1]!.id);
      expect(got[2]!.id).not.toBe(got[0]!.id);
      expect(r.requests).toHaveLength(3);
    } finally {
      await p.kill();
      await r.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
