// Helpers for NFC tests that drive a real Waymark server over HTTP.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, type RunningServer } from '../../server/serve.ts';
import { apiRequest, type ApiResponse, repoRoot, type ServerProcess, tempDataDir } from '../support/server.ts';
import { startPcscSandbox, type PcscSandbox } from './harness.ts';

export type Api = (method: string, path: string, body?: unknown) => Promise<ApiResponse>;

export async function until<T>(what: string, fn: () => Promise<T | undefined | null | false>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Creates a redirect batch and waits until it is ready. */
export async function readyBatch(api: Api, prefix: string, quantity: number): Promise<{ id: string }> {
  const created = await api('POST', '/batches', {
    label: `Tags ${prefix}`,
    prefix,
    quantity,
    function_type: 'redirect',
    base_payload: { url: 'https://example.com/landing' },
  });
  if (created.status !== 201) throw new Error(`batch create: ${created.status} ${created.text}`);
  const id = created.body.data.id as string;
  await until('batch ready', async () => (await api('GET', `/batches/${id}`)).body.data.status === 'ready');
  return { id };
}

export interface ManifestRow {
  serial: string;
  slug: string;
  url: string;
  id: string;
  status: string;
  hardware_id: string | null;
}

export async function manifest(api: Api, batchId: string): Promise<{ batch: { status: string }; nodes: ManifestRow[] }> {
  const r = await api('GET', `/batches/${batchId}/manifest`);
  if (r.status !== 200) throw new Error(`manifest: ${r.status} ${r.text}`);
  return r.body.data;
}

export interface SseEvent {
  type: string;
  data: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** Reads /v1/nfc/events with fetch (EventSource cannot send the Authorization header). */
export function openEvents(baseUrl: string, apiKey: string) {
  const events: SseEvent[] = [];
  const waiters: Array<{ pred: (e: SseEvent) => boolean; resolve: (e: SseEvent) => void }> = [];
  const controller = new AbortController();
  let cursor = 0;
  const ready = (async () => {
    const res = await fetch(`${baseUrl}/v1/nfc/events`, { headers: { authorization: `Bearer ${apiKey}` }, signal: controller.signal });
    if (res.status !== 200 || !res.body) throw new Error(`events: ${res.status}`);
    return res;
  })();
  void ready
    .then(async (res) => {
      const decoder = new TextDecoder();
      let buf = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buf += decoder.decode(chunk, { stream: true });
        let at;
        while ((at = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, at);
          buf = buf.slice(at + 2);
          const type = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (!type || data === undefined) continue;
          const e = { type, data: JSON.parse(data) };
          events.push(e);
          for (const w of [...waiters]) {
            if (w.pred(e)) {
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve(e);
            }
          }
        }
      }
    })
    .catch(() => undefined);
  return {
    events,
    ready,
    /** The next event (after the previous `next` call's match) satisfying `pred`. */
    next(pred: (e: SseEvent) => boolean, ms = 30_000): Promise<SseEvent> {
      for (let i = cursor; i < events.length; i++) {
        if (pred(events[i]!)) {
          cursor = i + 1;
          return Promise.resolve(events[i]!);
        }
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching event; got ${events.slice(cursor).map((e) => e.type).join(',')}`)), ms);
        waiters.push({
          pred,
          resolve: (e) => {
            clearTimeout(timer);
            cursor = events.length;
            resolve(e);
          },
        });
      });
    },
    close: () => controller.abort(),
  };
}

/** The bytes an NDEF URI record must have, built by hand from the RTD (independent of the encoder). */
export function expectedNdefUri(url: string): Buffer {
  const prefixes: Array<[string, number]> = [
    ['https://www.', 2],
    ['http://www.', 1],
    ['https://', 4],
    ['http://', 3],
  ];
  const [prefix, code] = prefixes.find(([p]) => url.startsWith(p)) ?? ['', 0];
  const rest = Buffer.from(url.slice(prefix.length));
  return Buffer.concat([Buffer.from([0xd1, 0x01, rest.length + 1, 0x55, code]), rest]);
}

/**
 * SIGKILLs a server together with its child processes (the NFC bridge), as a power loss does. A
 * bridge left behind by its killed server only exits when it notices the closed channel: in
 * between it would finish a tag write the test is holding back, and the test's crash would no
 * longer be mid-write.
 */
export async function killWithChildren(server: ServerProcess): Promise<void> {
  const parent = String(server.child.pid);
  const children = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        // "pid (comm) state ppid …": the fields after the command's closing parenthesis.
        return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1] === parent;
      } catch {
        return false; // gone meanwhile
      }
    });
  for (const pid of children) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await server.kill();
}

/** A data directory with an organization and an enterprise key. */
export function freshOrg(dataDir: string): string {
  const created = cli(dataDir, 'org', 'create', '--name', 'Crash test');
  return cli(dataDir, 'keys', 'create', '--org', created.org.id, '--name', 'tests', '--plan', 'enterprise').api_key as string;
}

function cli(dataDir: string, ...args: string[]): { [k: string]: any } { // eslint-disable-line @typescript-eslint/no-explicit-any
  const r = spawnSync(process.execPath, [join(repoRoot, 'server', 'cli.ts'), ...args, '--data', dataDir, '--json'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`cli ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!);
}

/** An in-process server with the NFC bridge on a private pcscd + vpcd, an enterprise key, and its reader ready. */
export interface NfcTestServer {
  sandbox: PcscSandbox;
  server: RunningServer;
  /** The server's data directory (its secrets.json holds the tag master keys). */
  dataDir: string;
  orgId: string;
  apiKey: string;
  api: Api;
  close(): Promise<void>;
}

export async function startNfcTestServer(dataDirPrefix: string): Promise<NfcTestServer> {
  const sandbox = await startPcscSandbox();
  const dataDir = tempDataDir(dataDirPrefix);
  const server = await startServer({
    host: '127.0.0.1',
    port: 0,
    dataDir,
    scanBase: 'https://wm.example',
    logger: { info: () => {}, error: (m, e) => console.error(m, e) },
    nfc: { env: { ...process.env, ...sandbox.env }, restartDelayMs: 200 },
  });
  const orgId = server.firstRun!.orgId;
  const big = { standard_per_minute: 100_000, batch_per_minute: 1000, burst_per_second: 10_000 };
  const apiKey = (await server.app.services.keys.createKey(orgId, 'nfc tests', 'enterprise', big)).apiKey;
  const api: Api = (method, path, body) => apiRequest(server.url, method, path, body, apiKey);
  await until('reader ready', async () => (await api('GET', '/nfc/status')).body.data.reader.state === 'ready');
  return {
    sandbox,
    server,
    dataDir,
    orgId,
    apiKey,
    api,
    close: async () => {
      await server.close();
      await sandbox.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
