import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_HTTP_TIMEOUTS } from '../../server/serve.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * HTTP server timeouts (docs/api.md, "Limits"), shortened here so that the test is quick: what
 * is asserted is that the server cuts a slow client off long before the client would finish,
 * and not before the bound — not a tight figure a loaded machine could miss.
 */
const BOUNDS = { headersMs: 600, requestMs: 1_200, keepAliveMs: 400, checkIntervalMs: 100 };

interface Outcome {
  /** ms from the first byte sent until the server closed the connection. */
  closedAfterMs: number;
  /** Bytes of the request the client had sent by then. */
  sent: number;
  response: string;
}

/** Sends `request` a byte every `gapMs` and reports when the server hangs up (or the client would have finished). */
function trickle(port: number, request: string, gapMs: number): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let sent = 0;
    let response = '';
    let started = 0;
    let timer: NodeJS.Timeout | undefined;
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (response += d));
    socket.on('error', () => {}); // a reset after the 408 is the server hanging up too
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ closedAfterMs: performance.now() - started, sent, response });
    });
    socket.on('connect', () => {
      started = performance.now();
      timer = setInterval(() => {
        if (socket.destroyed) return;
        if (sent === request.length) {
          clearInterval(timer);
          return;
        }
        socket.write(request[sent++]!);
      }, gapMs);
    });
    setTimeout(() => reject(new Error(`still open after 60 s (sent ${sent} of ${request.length} bytes)`)), 60_000).unref();
  });
}

describe('HTTP server timeouts', () => {
  let server: TestServer;
  let port: number;
  beforeAll(async () => {
    server = await startTestServer({ httpTimeouts: BOUNDS });
    port = Number(new URL(server.url).port);
  });
  afterAll(async () => {
    await server.close();
  });

  it('has bounded defaults: headers 10 s, whole request 30 s, idle keep-alive 5 s (not Node\'s 60 s / 300 s)', () => {
    expect(DEFAULT_HTTP_TIMEOUTS).toEqual({ headersMs: 10_000, requestMs: 30_000, keepAliveMs: 5_000, checkIntervalMs: 1_000 });
    const real = server.running.server;
    expect([real.headersTimeout, real.requestTimeout, real.keepAliveTimeout]).toEqual([BOUNDS.headersMs, BOUNDS.requestMs, BOUNDS.keepAliveMs]);
  });

  it('cuts off a client that sends its body a byte at a time (408), within the request bound', async () => {
    const body = JSON.stringify({ label: 'x'.repeat(400), function_type: 'redirect', payload: { url: 'https://example.com' } });
    const head = `POST /v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    // The headers go at once; then a byte every 25 ms would take more than 11 s.
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    const started = performance.now();
    let response = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (response += d));
    socket.on('error', () => {});
    socket.write(head);
    let sent = 0;
    const timer = setInterval(() => {
      if (!socket.destroyed && sent < body.length) socket.write(body[sent++]!);
    }, 25);
    const closedAfterMs = await new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now() - started)));
    clearInterval(timer);
    expect(sent).toBeLessThan(body.length);
    expect(response).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfterMs).toBeGreaterThanOrEqual(BOUNDS.requestMs - 50);
    expect(closedAfterMs).toBeLessThan(body.length * 25);
    // Nothing was created from the partial body.
    expect((await server.api('GET', '/nodes')).body.total).toBe(0);
  });

  it('cuts off a client that sends its headers a byte at a time, within the headers bound', async () => {
    const head = `GET /v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.apiKey}\r\nX-Padding: ${'p'.repeat(300)}\r\n\r\n`;
    const outcome = await trickle(port, head, 25);
    expect(outcome.sent).toBeLessThan(head.length);
    expect(outcome.closedAfterMs).toBeGreaterThanOrEqual(BOUNDS.headersMs - 50);
    expect(outcome.closedAfterMs).toBeLessThan(head.length * 25);
  });

  it('closes an idle keep-alive connection after the keep-alive bound', async () => {
    const request = `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
    const socket = connect(port, '127.0.0.1');
    let response = '';
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (response += d));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(request);
    // Idle from the moment the answer is in.
    while (!/\r\n\r\n\{.*\}$/s.test(response)) await new Promise((r) => setTimeout(r, 10));
    const idleFrom = performance.now();
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const idleMs = performance.now() - idleFrom;
    expect(response).toMatch(/^HTTP\/1\.1 200 /);
    expect(idleMs).toBeGreaterThanOrEqual(BOUNDS.keepAliveMs - 100);
    expect(idleMs).toBeLessThan(30_000);
  });
});
