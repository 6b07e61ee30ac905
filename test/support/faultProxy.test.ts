import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FaultProxy, startFaultProxy } from './faultProxy.ts';

/*
 * The fault proxy against a tiny real HTTP target that counts what it committed: every fault
 * must do exactly what the sync tests rely on (commit or not, answer or not, cut where).
 */

interface Target {
  url: string;
  server: Server;
  /** Bodies of the POSTs the target committed, in order. */
  committed: string[];
  /** Requests being processed right now, and the most seen at once. */
  inFlight: number;
  maxInFlight: number;
}

let target: Target;
let proxy: FaultProxy;

async function startTarget(): Promise<Target> {
  const t: Target = { url: '', server: createServer(), committed: [], inFlight: 0, maxInFlight: 0 };
  t.server.on('request', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      t.inFlight++;
      t.maxInFlight = Math.max(t.maxInFlight, t.inFlight);
      // A short pause so that two parallel copies really overlap inside the target.
      setTimeout(() => {
        t.inFlight--;
        if (req.method === 'POST') t.committed.push(Buffer.concat(chunks).toString());
        const body = JSON.stringify({ n: t.committed.length, path: req.url, auth: req.headers.authorization ?? null, pad: 'x'.repeat(1000) });
        res.writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': 'application/json', 'x-target': 'yes' });
        res.end(body);
      }, 20);
    });
  });
  await new Promise<void>((resolve) => t.server.listen(0, '127.0.0.1', () => resolve()));
  t.url = `http://127.0.0.1:${(t.server.address() as AddressInfo).port}`;
  return t;
}

const post = (path: string, body: string) =>
  fetch(`${proxy.url}${path}`, { method: 'POST', body, headers: { authorization: 'Bearer k', 'content-type': 'application/json' } });

/** A raw request that reports what arrived even when the connection is cut mid-body. */
function raw(path: string): Promise<{ status?: number; length?: number; received: number; error?: string }> {
  return new Promise((resolve) => {
    const out: { status?: number; length?: number; received: number; error?: string } = { received: 0 };
    const req = request(`${proxy.url}${path}`, { method: 'POST', agent: false }, (res) => {
      out.status = res.statusCode;
      out.length = Number(res.headers['content-length']);
      res.on('data', (c: Buffer) => (out.received += c.length));
      res.on('error', (err) => (out.error = err.message));
      res.on('close', () => resolve(out));
    });
    req.on('error', (err) => {
      out.error = err.message;
      resolve(out);
    });
    req.end('{}');
  });
}

beforeEach(async () => {
  target = await startTarget();
  proxy = await startFaultProxy(target.url);
});

afterEach(async () => {
  await proxy.close();
  await new Promise<void>((resolve) => {
    target.server.close(() => resolve());
    target.server.closeAllConnections();
  });
});

describe('fault proxy', () => {
  it('passes requests through with method, path, body, headers and status intact', async () => {
    const res = await post('/a/b?c=1', '{"x":1}');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-target')).toBe('yes');
    expect(await res.json()).toMatchObject({ n: 1, path: '/a/b?c=1', auth: 'Bearer k' });
    expect(target.committed).toEqual(['{"x":1}']);
    const missing = await fetch(`${proxy.url}/missing`);
    expect(missing.status).toBe(404);
    expect(proxy.calls).toEqual([
      { method: 'POST', path: '/a/b?c=1', action: 'pass', status: 200, forwarded: 1, delayMs: 0, ms: expect.any(Number) },
      { method: 'GET', path: '/missing', action: 'pass', status: 404, forwarded: 1, delayMs: 0, ms: expect.any(Number) },
    ]);
  });

  it('adds fixed latency, or random latency within bounds from the given source', async () => {
    proxy.latency = 60;
    const started = Date.now();
    expect((await post('/slow', '1')).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(60);
    const draws = [0, 1, 0.5];
    proxy.latency = { min: 10, max: 30, random: () => draws.shift()! };
    for (let i = 0; i < 3; i++) expect((await post('/r', String(i))).status).toBe(200);
    expect(proxy.calls.map((c) => c.delayMs)).toEqual([60, 10, 30, 20]);
  });

  it('drop-request closes the connection without forwarding; the target commits nothing', async () => {
    proxy.rule = (method) => (method === 'POST' ? 'drop-request' : 'pass');
    await expect(post('/x', 'lost')).rejects.toThrow();
    expect(target.committed).toEqual([]);
    expect((await fetch(`${proxy.url}/get`)).status).toBe(200);
    expect(proxy.calls[0]).toMatchObject({ action: 'drop-request', forwarded: 0 });
  });

  it('drop-response lets the target commit, then closes the connection instead of answering', async () => {
    proxy.rule = () => 'drop-response';
    await expect(post('/x', 'committed')).rejects.toThrow();
    expect(target.committed).toEqual(['committed']);
    expect(proxy.calls[0]).toMatchObject({ action: 'drop-response', forwarded: 1, status: 200 });
  });

  it('hold-request and hold-response park the call until released', async () => {
    proxy.rule = (_m, path) => (path === '/req' ? 'hold-request' : 'hold-response');
    const outcome = (p: Promise<Response>) => p.then(() => 'answered', () => 'failed');
    const a = outcome(post('/req', 'never forwarded'));
    const first = await proxy.nextHeld();
    expect(first).toEqual({ method: 'POST', path: '/req', body: 'never forwarded', action: 'hold-request' });
    const b = outcome(post('/res', 'forwarded'));
    const second = await proxy.nextHeld();
    expect(second).toEqual({ method: 'POST', path: '/res', body: 'forwarded', action: 'hold-response', status: 200 });
    expect(target.committed).toEqual(['forwarded']);
    proxy.releaseHeld();
    expect(await Promise.all([a, b])).toEqual(['failed', 'failed']);
  });

  it('reset-mid-body sends the headers and half the body, then cuts the connection', async () => {
    proxy.rule = () => 'reset-mid-body';
    const got = await raw('/cut');
    expect(got.status).toBe(200);
    expect(got.length).toBeGreaterThan(1000);
    expect(got.received).toBe(Math.floor(got.length! / 2));
    expect(got.error).toBeDefined();
    expect(target.committed).toEqual(['{}']);
    // fetch sees the same as a failure while reading the body.
    const res = await post('/cut', '{}');
    await expect(res.text()).rejects.toThrow();
  });

  it('duplicate forwards twice in sequence and answers with the second answer', async () => {
    proxy.rule = () => 'duplicate';
    const res = await post('/dup', 'twice');
    expect((await res.json()).n).toBe(2);
    expect(target.committed).toEqual(['twice', 'twice']);
    expect(target.maxInFlight).toBe(1);
    expect(proxy.calls[0]).toMatchObject({ action: 'duplicate', forwarded: 2 });
  });

  it('duplicate-parallel sends both copies at once', async () => {
    proxy.rule = () => 'duplicate-parallel';
    const res = await post('/dup', 'race');
    expect(res.status).toBe(200);
    expect((await res.json()).n).toBe(2);
    expect(target.committed).toEqual(['race', 'race']);
    expect(target.maxInFlight).toBe(2);
  });

  it('partitions each direction on its own and heals', async () => {
    proxy.partition('up');
    await expect(post('/p', 'up')).rejects.toThrow();
    expect(target.committed).toEqual([]);
    proxy.heal('up');
    proxy.partition('down');
    expect(proxy.partitioned).toEqual({ up: false, down: true });
    await expect(post('/p', 'down')).rejects.toThrow();
    expect(target.committed).toEqual(['down']);
    // A partition wins over the rule; healing restores the rule.
    proxy.rule = () => 'duplicate';
    proxy.partition();
    await expect(post('/p', 'both')).rejects.toThrow();
    expect(target.committed).toEqual(['down']);
    proxy.heal();
    expect((await post('/p', 'healed')).status).toBe(200);
    expect(target.committed).toEqual(['down', 'healed', 'healed']);
    expect(proxy.calls.map((c) => c.action)).toEqual(['partition-up', 'partition-down', 'partition-up', 'duplicate']);
  });

  it('closes the connection when the target is down', async () => {
    await new Promise<void>((resolve) => {
      target.server.close(() => resolve());
      target.server.closeAllConnections();
    });
    await expect(post('/x', 'nobody')).rejects.toThrow();
    expect(proxy.calls[0]).toMatchObject({ action: 'pass', forwarded: 0 });
    target.server = createServer(); // afterEach closes it
  });
});
