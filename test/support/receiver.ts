import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  headers: IncomingHttpHeaders;
  body: string;
  /** What the receiver answered (0 = the connection was dropped). */
  status: number;
  /** performance.now() when the request arrived. */
  at: number;
}

/** What to answer to the n-th request (0-based): a status, optionally after a promise resolves. */
export type Behaviour = (n: number, req: { headers: IncomingHttpHeaders; body: string }) => number | Promise<number>;

/** A real webhook receiver on 127.0.0.1 that records every request it gets. */
export class Receiver {
  readonly requests: ReceivedRequest[] = [];
  behaviour: Behaviour;
  private server: Server | undefined;
  private port = 0;
  private waiters: Array<() => void> = [];

  constructor(behaviour: Behaviour = () => 204) {
    this.behaviour = behaviour;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Requests answered with a 2xx. */
  get accepted(): ReceivedRequest[] {
    return this.requests.filter((r) => r.status >= 200 && r.status < 300);
  }

  async listen(port = 0): Promise<this> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const n = this.requests.length;
        const record: ReceivedRequest = { headers: req.headers, body, status: 0, at: performance.now() };
        this.requests.push(record);
        Promise.resolve(this.behaviour(n, { headers: req.headers, body })).then(
          (status) => {
            record.status = status;
            res.statusCode = status;
            res.end(status >= 400 ? 'receiver says no' : '');
            this.notify();
          },
          () => {
            res.destroy();
            this.notify();
          },
        );
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    waiters.forEach((w) => w());
  }

  /** Resolves when `predicate` holds (checked after every answered request); rejects after `timeoutMs`. */
  async waitFor(predicate: (r: this) => boolean, timeoutMs = 15_000, what = 'receiver condition'): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!predicate(this)) {
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what} (${this.requests.length} requests so far)`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 250));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }
}

/** A free loopback port nobody listens on (for a receiver that is down, then comes up). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Polls `check` every `everyMs` until it returns a value (not undefined); rejects after `timeoutMs`. */
export async function eventually<T>(check: () => T | undefined | Promise<T | undefined>, timeoutMs = 15_000, what = 'condition', everyMs = 50): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
