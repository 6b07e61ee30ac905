import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the proxy does with a request:
 * - pass: forward it and return the answer;
 * - hold-request: read it, never forward it, never answer (the call is lost on the way);
 * - hold-response: forward it, let the target commit and answer, then never answer the client
 *   (the answer is lost on the way back).
 */
export type FaultAction = 'pass' | 'hold-request' | 'hold-response';

export interface HeldCall {
  method: string;
  path: string;
  body: string;
  action: FaultAction;
  /** The target's status, for hold-response. */
  status?: number;
}

export interface FaultProxy {
  url: string;
  /** Decides per request; default: pass everything. */
  rule: (method: string, path: string) => FaultAction;
  /** Resolves with the next call the proxy holds. */
  nextHeld(): Promise<HeldCall>;
  close(): Promise<void>;
}

/** An HTTP proxy on 127.0.0.1 in front of `target` that loses requests or answers on demand. */
export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const held: HeldCall[] = [];
  const waiting: Array<(call: HeldCall) => void> = [];
  const parked: ServerResponse[] = [];
  const hold = (call: HeldCall, res: ServerResponse) => {
    parked.push(res);
    const waiter = waiting.shift();
    if (waiter) waiter(call);
    else held.push(call);
  };
  const proxy: FaultProxy = {
    url: '',
    rule: () => 'pass',
    nextHeld: () => new Promise((resolve) => {
      const call = held.shift();
      if (call) resolve(call);
      else waiting.push(resolve);
    }),
    close: async () => {
      parked.forEach((res) => res.destroy());
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const method = req.method ?? 'GET';
      const path = req.url ?? '/';
      const action = proxy.rule(method, path);
      if (action === 'hold-request') {
        hold({ method, path, body: body.toString(), action }, res);
        return;
      }
      const headers = { ...req.headers, host: new URL(target).host, 'content-length': String(body.length) };
      const upstream = request(`${target}${path}`, { method, headers }, (up) => {
        const parts: Buffer[] = [];
        up.on('data', (c: Buffer) => parts.push(c));
        up.on('end', () => {
          if (action === 'hold-response') {
            hold({ method, path, body: body.toString(), action, status: up.statusCode ?? 0 }, res);
            return;
          }
          res.writeHead(up.statusCode ?? 502, up.headers);
          res.end(Buffer.concat(parts));
        });
      });
      upstream.on('error', () => {
        res.destroy();
      });
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}
