import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * What the proxy does with a request:
 * - pass: forward it and return the answer;
 * - hold-request: read it, never forward it, never answer (the call is lost on the way);
 * - hold-response: forward it, let the target commit and answer, then never answer the client
 *   (the answer is lost on the way back);
 * - drop-request: read it, never forward it, close the connection (the client sees a reset);
 * - drop-response: forward it, let the target commit, then close the connection instead of
 *   answering (the answer is lost after commit; unlike hold-response the client learns at once);
 * - reset-mid-body: forward it, send the status, headers and the first half of the body, then
 *   destroy the socket (the answer is cut off mid-body);
 * - duplicate: forward it twice, one after the other, and answer with the second answer (a
 *   retry the client never made, e.g. by a middlebox);
 * - duplicate-parallel: forward two copies at once and answer with the one that finishes last
 *   (the two race inside the target).
 */
export type FaultAction =
  | 'pass'
  | 'hold-request'
  | 'hold-response'
  | 'drop-request'
  | 'drop-response'
  | 'reset-mid-body'
  | 'duplicate'
  | 'duplicate-parallel';

export interface HeldCall {
  method: string;
  path: string;
  body: string;
  action: FaultAction;
  /** The target's status, for hold-response. */
  status?: number;
}

/** One request as the proxy handled it (for tests that check a fault really happened). */
export interface ProxyCall {
  method: string;
  path: string;
  /** The action applied; `partition-up`/`partition-down` when a partition decided instead of the rule. */
  action: FaultAction | 'partition-up' | 'partition-down';
  /** The status the target answered (last answer for duplicates); undefined if never forwarded. */
  status?: number;
  /** How many times the request reached the target (0, 1 or 2). */
  forwarded: number;
  /** The latency added, in ms. */
  delayMs: number;
  /** From the request's arrival to the answer's end (or the cut), in ms; unset while in flight or held. */
  ms?: number;
}

/** Added delay per request: fixed ms, or uniform in [min, max] (pass `random` for a seeded source). */
export type Latency = number | { min: number; max: number; random?: () => number };

export interface FaultProxy {
  url: string;
  /** Decides per request; default: pass everything. */
  rule: (method: string, path: string) => FaultAction;
  /** Delay added before each request is forwarded (default 0). */
  latency: Latency;
  /** Resolves with the next call the proxy holds. */
  nextHeld(): Promise<HeldCall>;
  /**
   * Cuts one direction (or both): `up` (client → target) closes the connection without
   * forwarding; `down` (target → client) forwards, lets the target commit, then closes the
   * connection. Requests already in flight are not affected. Takes precedence over `rule`.
   */
  partition(direction?: 'up' | 'down' | 'both'): void;
  /** Ends a partition (both directions by default). */
  heal(direction?: 'up' | 'down' | 'both'): void;
  readonly partitioned: { up: boolean; down: boolean };
  /** Every request handled so far, in order of arrival. */
  readonly calls: ProxyCall[];
  /** Closes connections parked by hold-* (the client then sees a reset). */
  releaseHeld(): void;
  close(): Promise<void>;
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade', 'te', 'trailer'];

/** An HTTP proxy on 127.0.0.1 in front of `target` that delays, loses, cuts or repeats requests on demand. */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const targetUrl = new URL(target);
  const held: HeldCall[] = [];
  const waiting: Array<(call: HeldCall) => void> = [];
  const parked = new Set<ServerResponse>();
  const calls: ProxyCall[] = [];
  const partitioned = { up: false, down: false };
  const hold = (call: HeldCall, res: ServerResponse) => {
    parked.add(res);
    res.once('close', () => parked.delete(res));
    const waiter = waiting.shift();
    if (waiter) waiter(call);
    else held.push(call);
  };
  const sides = (direction: 'up' | 'down' | 'both') => (direction === 'both' ? (['up', 'down'] as const) : [direction]);
  const releaseHeld = () => {
    for (const res of parked) res.destroy();
    parked.clear();
  };
  const proxy: FaultProxy = {
    url: '',
    rule: () => 'pass',
    latency: 0,
    nextHeld: () =>
      new Promise((resolve) => {
        const call = held.shift();
        if (call) resolve(call);
        else waiting.push(resolve);
      }),
    partition: (direction = 'both') => sides(direction).forEach((s) => (partitioned[s] = true)),
    heal: (direction = 'both') => sides(direction).forEach((s) => (partitioned[s] = false)),
    partitioned,
    calls,
    releaseHeld,
    close: async () => {
      releaseHeld();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };

  const delayFor = (): number => {
    const l = proxy.latency;
    if (typeof l === 'number') return l;
    return Math.round(l.min + (l.random ?? Math.random)() * (l.max - l.min));
  };

  const forward = (method: string, path: string, headers: IncomingHttpHeaders, body: Buffer): Promise<Answer> =>
    new Promise((resolve, reject) => {
      const upstream = request(
        { protocol: targetUrl.protocol, hostname: targetUrl.hostname, port: targetUrl.port, path, method, headers, agent: false },
        (up) => {
          const parts: Buffer[] = [];
          up.on('data', (c: Buffer) => parts.push(c));
          up.on('end', () => resolve({ status: up.statusCode ?? 502, headers: up.headers, body: Buffer.concat(parts) }));
          up.on('error', reject);
        },
      );
      upstream.on('error', reject);
      upstream.end(body);
    });

  /** The target's headers minus hop-by-hop ones, with the length of the body we actually hold. */
  const answerHeaders = (answer: Answer): Record<string, string | string[]> => {
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined && !HOP_BY_HOP.includes(k)) out[k] = v;
    out['content-length'] = String(answer.body.length);
    return out;
  };

  const cut = (res: ServerResponse) => {
    // destroy() on the socket, not only on res: the client must see the connection go away.
    const socket: Socket | null = res.socket;
    res.destroy();
    socket?.destroy();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const record: ProxyCall = { method, path, action: 'pass', forwarded: 0, delayMs: 0 };
    calls.push(record);
    const arrived = performance.now();
    res.once('close', () => {
      if (!parked.has(res)) record.ms = Math.round(performance.now() - arrived);
    });
    const down = partitioned.down;
    if (partitioned.up) {
      record.action = 'partition-up';
      cut(res);
      return;
    }
    const action: FaultAction | 'partition-down' = down ? 'partition-down' : proxy.rule(method, path);
    record.action = action;
    if (action === 'hold-request') {
      hold({ method, path, body: body.toString(), action }, res);
      return;
    }
    if (action === 'drop-request') {
      cut(res);
      return;
    }
    record.delayMs = delayFor();
    if (record.delayMs > 0) await new Promise((r) => setTimeout(r, record.delayMs));
    const headers: IncomingHttpHeaders = { ...req.headers, host: targetUrl.host, 'content-length': String(body.length) };
    for (const h of HOP_BY_HOP) delete headers[h];
    let answer: Answer;
    try {
      if (action === 'duplicate') {
        await forward(method, path, headers, body);
        record.forwarded++;
        answer = await forward(method, path, headers, body);
        record.forwarded++;
      } else if (action === 'duplicate-parallel') {
        let last: Answer | undefined;
        await Promise.all(
          [0, 1].map(async () => {
            last = await forward(method, path, headers, body);
            record.forwarded++;
          }),
        );
        answer = last!;
      } else {
        answer = await forward(method, path, headers, body);
        record.forwarded++;
      }
    } catch {
      cut(res); // the target is down: the client sees the connection fail
      return;
    }
    record.status = answer.status;
    if (action === 'hold-response') {
      hold({ method, path, body: body.toString(), action, status: answer.status }, res);
      return;
    }
    if (action === 'drop-response' || action === 'partition-down') {
      cut(res);
      return;
    }
    if (action === 'reset-mid-body') {
      // An empty body has no middle: promise one byte that never comes.
      res.writeHead(answer.status, { ...answerHeaders(answer), 'content-length': String(Math.max(1, answer.body.length)) });
      res.write(answer.body.subarray(0, Math.floor(answer.body.length / 2)), () => cut(res));
      return;
    }
    res.writeHead(answer.status, answerHeaders(answer));
    res.end(answer.body);
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks)).catch(() => cut(res));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
