import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP load balancer on 127.0.0.1 that hands each new connection to the next backend in turn
 * (what a round-robin balancer in front of several `waymark serve` processes does). It knows
 * nothing of HTTP: a client that keeps a connection alive stays on one backend, so tests that
 * want requests spread open a connection per request (requestOnce).
 */
export class RoundRobinProxy {
  /** Which backend (index) each connection went to, in order. */
  readonly assigned: number[] = [];
  private backends: Array<{ host: string; port: number }>;
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  private next = 0;

  constructor(backendUrls: string[]) {
    this.backends = backendUrls.map(backend);
  }

  /** Sends the slot's next connections to another backend (a process started in place of one that died). */
  replace(index: number, backendUrl: string): void {
    this.backends = this.backends.map((b, i) => (i === index ? backend(backendUrl) : b));
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async listen(): Promise<this> {
    this.server = createServer((client) => {
      const index = this.next++ % this.backends.length;
      this.assigned.push(index);
      const upstream = connect(this.backends[index]!);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        // A reset on either side ends both (a killed backend, a client that gave up).
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

function backend(u: string): { host: string; port: number } {
  const url = new URL(u);
  return { host: url.hostname, port: Number(url.port) };
}
