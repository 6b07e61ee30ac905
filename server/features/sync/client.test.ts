import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpRemoteClient, RemoteUnavailableError } from './client.ts';

/**
 * A remote whose kept-alive connections are closed under the client: each connection answers its
 * first request and drops the next one unanswered (as a server closing an idle connection just as
 * the client sends on it), or, with `dropAll`, drops every request.
 */
async function closingRemote(dropAll = false): Promise<{ url: string; server: Server; connections: () => number }> {
  const served = new WeakMap<Socket, number>();
  let connections = 0;
  const server = createServer((req, res) => {
    const n = served.get(req.socket) ?? 0;
    served.set(req.socket, n + 1);
    if (dropAll || n >= 1) {
      req.socket.destroy();
      return;
    }
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ data: [{ id: 1, resolved_at: null }], error: null }));
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, connections: () => connections };
}

/** Lets the answered connection go back to fetch's pool as idle, so the next call reuses it (a condition, not a timing bound). */
async function idleInPool(): Promise<void> {
  await new Promise((r) => setTimeout(r, 50));
}

describe('HttpRemoteClient', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
  });

  it('sends a call again on a fresh connection when the remote closed the kept-alive one under it', async () => {
    const remote = await closingRemote();
    servers.push(remote.server);
    const client = new HttpRemoteClient(remote.url, 'wmk_test');
    expect(await client.resolveConflict(1)).toEqual([{ id: 1, resolved_at: null }]);
    await idleInPool();
    // The second call (a POST: fetch repeats only idempotent methods by itself) goes out on the
    // kept-alive connection, which the remote drops: it is sent again on a new connection.
    expect(await client.resolveConflict(2)).toEqual([{ id: 1, resolved_at: null }]);
    expect(remote.connections()).toBe(2);
  });

  it('gives up after one more try when the remote keeps dropping calls', async () => {
    const remote = await closingRemote(true);
    servers.push(remote.server);
    const client = new HttpRemoteClient(remote.url, 'wmk_test');
    const failed = await client.resolveConflict(1).catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(RemoteUnavailableError);
    expect((failed as Error).message).toMatch(/^Remote unreachable: other side closed/);
    expect(remote.connections()).toBe(2);
  });
});
