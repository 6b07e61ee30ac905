/**
 * The scan benchmarks' load (scan.ts: SQLite; scan-postgres.ts: PostgreSQL with one and two
 * processes): autocannon with browser User-Agents, many client addresses in X-Forwarded-For, a
 * third of the URLs in lower case and a fifth with `?nfc`; the servers' CPU time from /proc, and a
 * `GET /healthz` probe every 5 ms meanwhile. Not a benchmark itself (`_` prefix).
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

export const USER_AGENTS = [
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (Linux; Android 13; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (iPad; CPU OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
];

export function slugOf(i: number): string {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  let s = '';
  let v = 0x5a5a5a + i * 7919;
  for (let k = 0; k < 8; k++) {
    s = alphabet[v % 32] + s;
    v = Math.floor(v / 32);
  }
  return s;
}

export interface Figures {
  rps: number;
  p50: number;
  p99: number;
  total: number;
  redirects: number;
  warmRedirects: number;
  /** Requests sent but not awaited when autocannon stopped at the end of the duration. */
  cutOff: number;
  /** Server CPU time (all threads) per answered request, microseconds. */
  cpuPerRequest: number;
  /** The same, main thread only (the event loop that parses and answers requests). */
  mainCpuPerRequest: number;
  errors: number;
  /** Latency of GET /healthz sent every 5 ms on one connection during the run (the rest of the
   * server's responsiveness under scan load; the bare server answers it with its 302), ms. */
  probeP50: number;
  probeP99: number;
  /** CPU pressure at the end of the run (/proc/pressure/cpu "some" avg10, %): the benchmark's own two processes plus other jobs. */
  pressure: number;
}

/** CPU seconds (user + system) a process (all threads) or one of its threads has used so far, from /proc (Linux). */
export function cpuSeconds(pid: number | undefined, thread?: number): number {
  try {
    const stat = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return Number.NaN;
  }
}

/** Share of the last 10 s in which some task waited for a CPU (Linux PSI); NaN if unavailable. */
export function cpuPressure(): number {
  try {
    const m = /some avg10=([\d.]+)/.exec(readFileSync('/proc/pressure/cpu', 'utf8'));
    return m ? Number(m[1]) : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Sends GET /healthz every 5 ms, one at a time on one kept-alive connection, until stopped. */
function probe(port: number): { stop(): Promise<{ p50: number; p99: number }> } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  let running = true;
  const once = () =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      http
        .get({ host: '127.0.0.1', port, path: '/healthz', agent }, (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(performance.now() - started);
            resolve();
          });
        })
        .on('error', () => resolve());
    });
  const loop = (async () => {
    while (running) {
      await once();
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      agent.destroy();
      latencies.sort((a, b) => a - b);
      const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * q))] ?? Number.NaN;
      return { p50: at(0.5), p99: at(0.99) };
    },
  };
}

interface BenchRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  setupRequest?: (req: BenchRequest) => BenchRequest;
}

export interface LoadOptions {
  connections: number;
  /** Seconds of measured load (after a 10 000-request warm-up). */
  duration: number;
  /** The server's processes, for CPU per request (all threads, and each one's main thread). */
  pids: number[];
  /**
   * Every request is a tag tap carrying a fresh tap proof (instead of a fifth being `?nfc`): the
   * path of the next tap of the tag of slug `i` (a SUN URL with that tag's next counter).
   */
  tapPath?: (slugIndex: number) => string;
  /**
   * Resolves once the server has done the work its requests left behind (the analytics fold).
   * Awaited after the warm-up and after the measured load, so CPU per request counts each measured
   * request's whole work and none of the warm-up's: a run that serves fewer requests per second
   * otherwise pays a bigger share of a backlog it did not make.
   */
  settle?: () => Promise<void>;
}

export async function load(port: number, slugs: string[], { connections, duration, pids, tapPath, settle }: LoadOptions): Promise<Figures> {
  const requests: BenchRequest[] = [];
  for (let i = 0; i < 1000; i++) {
    const slug = slugs[i % slugs.length] as string;
    const slugIndex = i % slugs.length;
    const tap = tapPath !== undefined;
    const request: BenchRequest = {
      method: 'GET',
      path: `/v/${i % 3 === 0 ? slug.toLowerCase() : slug}${i % 5 === 0 ? '?nfc' : ''}`,
      headers: {
        'user-agent': USER_AGENTS[i % USER_AGENTS.length] as string,
        'x-forwarded-for': `${(i * 37) % 223 + 1}.${(i * 11) % 256}.${(i * 7) % 256}.${i % 254 + 1}`,
      },
    };
    requests.push(tap ? { ...request, setupRequest: (req: BenchRequest) => ({ ...req, path: tapPath(slugIndex) }) } : request);
  }
  // warm-up, not counted in the figures (but its scans are recorded: counted in `warmRedirects`)
  const warm = await autocannon({ url: `http://127.0.0.1:${port}`, connections, amount: 10_000, requests });
  const warmRedirects = Number((warm.statusCodeStats as Record<string, { count: number }>)['302']?.count ?? 0);
  await settle?.();
  const cpuOf = () => pids.reduce((t, pid) => t + cpuSeconds(pid), 0);
  const mainOf = () => pids.reduce((t, pid) => t + cpuSeconds(pid, pid), 0);
  const cpuBefore = cpuOf();
  const mainBefore = mainOf();
  const prober = probe(port);
  const result = await autocannon({ url: `http://127.0.0.1:${port}`, connections, duration, requests });
  const probed = await prober.stop();
  await settle?.();
  const cpu = cpuOf() - cpuBefore;
  const mainCpu = mainOf() - mainBefore;
  const redirects = Number((result.statusCodeStats as Record<string, { count: number }>)['302']?.count ?? 0);
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    redirects,
    warmRedirects,
    cutOff: result.requests.sent - result.requests.total,
    cpuPerRequest: (cpu / result.requests.total) * 1e6,
    mainCpuPerRequest: (mainCpu / result.requests.total) * 1e6,
    errors: result.errors + result.timeouts + result.non2xx - redirects,
    probeP50: probed.p50,
    probeP99: probed.p99,
    pressure: cpuPressure(),
  };
}

