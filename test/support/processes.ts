import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { RoundRobinProxy } from './roundRobinProxy.ts';
import { type ApiResponse, giveRootKey, repoRoot, type ServerProcess, spawnServer, tempDataDir } from './server.ts';
import { freshPostgresDatabase } from './stores.ts';

/**
 * Several real `waymark serve --database …` processes on one fresh PostgreSQL database behind a
 * round-robin TCP proxy: the central tier as an operator runs it (docs/deploy.md).
 */
export interface ServiceProcesses {
  /** The proxy's URL: requests made with `api` go to the processes in turn. */
  url: string;
  proxy: RoundRobinProxy;
  processes: ServerProcess[];
  databaseUrl: string;
  /** The secrets file (with the root key) every process is given. */
  secretsFile: string;
  orgId: string;
  /** A developer-plan key of the organization (made with `waymark org create`). */
  apiKey: string;
  /** A new key of the organization (`waymark keys create --database …`). */
  createKey(plan: 'developer' | 'pro' | 'enterprise', orgId?: string): Promise<string>;
  /** Another organization (`waymark org create --database …`), for a test that needs one of its own. */
  createOrg(name: string): Promise<string>;
  /** One request on a connection of its own, through the proxy (or to `base`). */
  api(method: string, path: string, body?: unknown, options?: { key?: string; base?: string }): Promise<ApiResponse>;
  /** Starts a new process in place of `processes[index]` (one a test killed): same database, same options, same slot behind the proxy. */
  replace(index: number): Promise<ServerProcess>;
  close(): Promise<void>;
}

const run = promisify(execFile);

/** Three processes and their clients start together on a 2-core machine that may be busy. */
export const START_TIMEOUT_MS = 60_000;

export async function startServiceProcesses(count: number, options: { args?: string[]; env?: NodeJS.ProcessEnv } = {}): Promise<ServiceProcesses> {
  const database = await freshPostgresDatabase();
  const dirs: string[] = [];
  const processes: ServerProcess[] = [];
  let proxy: RoundRobinProxy | undefined;
  const close = async () => {
    await proxy?.close();
    await Promise.all(processes.map((p) => p.stop()));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await database.drop();
  };
  try {
    const dir = tempDataDir('waymark-processes-');
    dirs.push(dir);
    // The one secrets file every process is given, as an operator does (docs/deploy.md).
    const secretsFile = giveRootKey(join(dir, 'shared-secrets.json'));
    const { stdout } = await run(process.execPath, [join(repoRoot, 'server', 'cli.ts'), 'org', 'create', '--name', 'Processes', '--data', dir, '--database', database.url, '--json']);
    const created = JSON.parse(stdout) as { org: { id: string }; api_key: string };
    const cli = (args: string[]) => run(process.execPath, [join(repoRoot, 'server', 'cli.ts'), ...args, '--data', dir, '--database', database.url, '--json']);
    const spawnOne = async () => {
      const data = tempDataDir('waymark-process-');
      dirs.push(data);
      return spawnServer(data, options.args ?? [], { WAYMARK_NO_NFC: '1', WAYMARK_SECRETS_FILE: secretsFile, ...options.env }, { database: database.url, startTimeoutMs: START_TIMEOUT_MS });
    };
    // One after the other: the first applies the migrations, the others find them applied.
    for (let i = 0; i < count; i++) processes.push(await spawnOne());
    proxy = await new RoundRobinProxy(processes.map((p) => p.url)).listen();
    const url = proxy.url;
    return {
      url,
      proxy,
      processes,
      databaseUrl: database.url,
      secretsFile,
      orgId: created.org.id,
      apiKey: created.api_key,
      createOrg: async (name) => {
        const { stdout: out } = await cli(['org', 'create', '--name', name]);
        return (JSON.parse(out) as { org: { id: string } }).org.id;
      },
      createKey: async (plan, orgId = created.org.id) => {
        const { stdout: out } = await cli(['keys', 'create', '--org', orgId, '--name', `test ${plan}`, '--plan', plan]);
        return (JSON.parse(out) as { api_key: string }).api_key;
      },
      api: (method, path, body, o = {}) => requestOnce(o.base ?? url, method, path, body, o.key ?? created.api_key),
      replace: async (index) => {
        await processes[index]!.kill();
        const fresh = await spawnOne();
        processes[index] = fresh;
        proxy!.replace(index, fresh.url);
        return fresh;
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** An API request on a fresh connection (`Connection: close`), so a TCP balancer picks a backend for it. */
export function requestOnce(base: string, method: string, path: string, body?: unknown, key?: string): Promise<ApiResponse> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const target = new URL(path.startsWith('/v') || path.startsWith('/h') ? path : `/v1${path}`, base);
  return new Promise((resolve, reject) => {
    const req = request(target, {
      method,
      agent: false,
      headers: {
        connection: 'close',
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(payload !== undefined ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) } : {}),
      },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('error', reject);
      res.on('end', () => {
        let parsed: unknown;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          // not JSON
        }
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
        resolve({ status: res.statusCode ?? 0, headers, body: parsed, text });
      });
    });
    req.end(payload);
  });
}
