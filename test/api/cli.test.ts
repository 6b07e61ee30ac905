import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { apiRequest, repoRoot, spawnServer, tempDataDir } from '../support/server.ts';
import { eventually } from '../support/receiver.ts';

const CLI = join(repoRoot, 'server', 'cli.ts');
const KEY_RE = /wmk_[0-9A-Za-z]{32}/;

/** Runs a one-shot CLI command with a clean WAYMARK_* environment. */
function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('WAYMARK_')));
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `waymark serve` configured only through WAYMARK_* variables. */
async function serveWithEnv(env: Record<string, string>) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('WAYMARK_')));
  const child = spawn(process.execPath, [CLI, 'serve'], { env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await Promise.race([
    new Promise<string>((resolve) => {
      const onData = () => {
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]!);
      };
      child.stdout.on('data', onData);
    }),
    exited.then((code) => {
      throw new Error(`serve exited with ${code}: ${out}`);
    }),
  ]);
  return { url, output: () => out, stop: async () => (child.kill('SIGTERM'), exited) };
}

/** The start-up banner ends with the console line; spawnServer resolves at the first line. */
async function banner(proc: { output: () => string }): Promise<string> {
  return eventually(() => (/Console: \S+/.test(proc.output()) ? proc.output() : undefined), 60_000, `the console line in:\n${proc.output()}`, 10);
}

describe('CLI', async () => {
  const dirs: string[] = [];
  const dir = () => {
    const d = tempDataDir('waymark-cli-');
    dirs.push(d);
    return d;
  };
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('serve on an empty data dir prints the URL, the first key once and a console link with #key=', async () => {
    const data = dir();
    const first = await spawnServer(data);
    const out = await banner(first);
    expect(out).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+/);
    expect(out).toContain('Created the default organization');
    const key = KEY_RE.exec(out)![0];
    expect(out).toContain(`Console: ${first.url}/console/#key=${key}`);
    expect(out).not.toMatch(/[?&]key=/);
    expect((await apiRequest(first.url, 'GET', '/nodes', undefined, key)).status).toBe(200);
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
    await first.stop();
    expect(first.child.exitCode).toBe(0);
    expect(first.output()).toContain('SIGTERM: shutting down');

    // The second start prints no key, and the first key still works.
    const second = await spawnServer(data);
    expect(await banner(second)).not.toMatch(KEY_RE);
    expect(second.output()).toContain(`Console: ${second.url}/console/`);
    expect((await apiRequest(second.url, 'GET', '/nodes', undefined, key)).status).toBe(200);
    await second.stop();
    expect(second.child.exitCode).toBe(0);
  });

  it('serve warns once when the scan base is loopback, never with a public --scan-base or an organization scan domain', async () => {
    const warning = /^Warning: the scan base http:\/\/127\.0\.0\.1:\d+ is a loopback address: phones cannot open its scan URLs.*--scan-base.*Settings.*$/gm;
    const data = dir();
    const loopback = await spawnServer(data);
    const out = await banner(loopback);
    expect(out.match(warning)).toHaveLength(1);
    const key = KEY_RE.exec(out)![0];
    await loopback.stop();

    const publicBase = await spawnServer(dir(), ['--scan-base', 'https://w.example.com']);
    expect(await banner(publicBase)).not.toMatch(/Warning: the scan base/);
    await publicBase.stop();

    // The default organization sets its own domain: the loopback default no longer prints anywhere.
    const again = await spawnServer(data);
    await banner(again);
    expect((await apiRequest(again.url, 'PATCH', '/organization', { scan_base: 'https://scan.example.com' }, key)).status).toBe(200);
    await again.stop();
    const third = await spawnServer(data);
    expect(await banner(third)).not.toMatch(/Warning: the scan base/);
    await third.stop();
  }, 90_000); // four server starts

  it('SIGTERM exits 0 and keeps committed data', async () => {
    const data = dir();
    const proc = await spawnServer(data);
    const key = KEY_RE.exec(await banner(proc))![0];
    const created = await apiRequest(proc.url, 'POST', '/nodes', { label: 'kept', function_type: 'redirect', payload: { url: 'https://a.b' } }, key);
    expect(created.status).toBe(201);
    await proc.stop();
    expect(proc.child.exitCode).toBe(0);
    const again = await spawnServer(data);
    expect((await apiRequest(again.url, 'GET', `/nodes/${created.body.data.slug}`, undefined, key)).body.data.label).toBe('kept');
    await again.stop();
  });

  it('org create --json prints one JSON line {org: {id, name}, api_key}', async () => {
    const data = dir();
    const res = await run(['org', 'create', '--name', 'Acme Field Ops', '--data', data, '--json']);
    expect(res.code).toBe(0);
    const lines = res.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const parsed = JSON.parse(lines[0]!);
    expect(Object.keys(parsed).sort()).toEqual(['api_key', 'org']);
    expect(Object.keys(parsed.org).sort()).toEqual(['id', 'name']);
    expect(parsed.org.name).toBe('Acme Field Ops');
    expect(parsed.api_key).toMatch(new RegExp(`^${KEY_RE.source}$`));
    // Serving that data dir is not a first run, and the key works.
    const proc = await spawnServer(data);
    expect(await banner(proc)).not.toContain('Created the default organization');
    expect((await apiRequest(proc.url, 'GET', '/nodes', undefined, parsed.api_key)).status).toBe(200);
    await proc.stop();
  });

  it('keys create --json prints one JSON line {key: {id, name, plan}, api_key}; bad input exits non-zero', async () => {
    const data = dir();
    const org = JSON.parse((await run(['org', 'create', '--name', 'O', '--data', data, '--json'])).stdout);
    const res = await run(['keys', 'create', '--org', org.org.id, '--name', 'Printer', '--plan', 'pro', '--data', data, '--json']);
    expect(res.code).toBe(0);
    const lines = res.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const parsed = JSON.parse(lines[0]!);
    expect(Object.keys(parsed).sort()).toEqual(['api_key', 'key']);
    expect(Object.keys(parsed.key).sort()).toEqual(['admin', 'id', 'name', 'plan']);
    expect(parsed.key).toMatchObject({ name: 'Printer', plan: 'pro', admin: false });
    expect(parsed.api_key).toMatch(KEY_RE);
    expect(JSON.parse((await run(['keys', 'create', '--org', org.org.id, '--name', 'D', '--data', data, '--json'])).stdout).key.plan).toBe('developer');

    const unknownOrg = await run(['keys', 'create', '--org', 'nope', '--name', 'x', '--data', data, '--json']);
    expect(unknownOrg.code).not.toBe(0);
    expect(unknownOrg.stderr).toMatch(/organization nope not found/);
    expect(unknownOrg.stdout).toBe('');
    const badPlan = await run(['keys', 'create', '--org', org.org.id, '--name', 'x', '--plan', 'gold', '--data', data]);
    expect(badPlan.code).not.toBe(0);
    expect(badPlan.stderr).toMatch(/gold/);
    const blank = await run(['org', 'create', '--name', '  ', '--data', data]);
    expect(blank.code).not.toBe(0);
    expect((await run(['org', 'create', '--data', data])).code).not.toBe(0);
  });

  it('org list shows ids, names and key counts; a lost first key is replaced with keys create --org <name> while serving', { timeout: 60_000 }, async () => {
    const data = dir();
    expect(JSON.parse((await run(['org', 'list', '--data', data, '--json'])).stdout)).toEqual({ orgs: [] });

    const proc = await spawnServer(data);
    const lostKey = KEY_RE.exec(await banner(proc))![0];
    const listed = await run(['org', 'list', '--data', data, '--json']);
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim().split('\n')).toHaveLength(1);
    const [first] = JSON.parse(listed.stdout).orgs;
    expect(first).toMatchObject({ name: 'Default organization', active_keys: 1 });
    expect(Object.keys(first).sort()).toEqual(['active_keys', 'created_at', 'id', 'name']);

    // The recovery docs/api.md describes: a new key by the organization's name, on the data dir
    // of the running server, which accepts it at once.
    const recovered = await run(['keys', 'create', '--org', 'Default organization', '--name', 'Recovered', '--data', data, '--json']);
    expect(recovered.code).toBe(0);
    const newKey = JSON.parse(recovered.stdout).api_key as string;
    expect(newKey).not.toBe(lostKey);
    expect((await apiRequest(proc.url, 'GET', '/nodes', undefined, newKey)).status).toBe(200);
    await proc.stop();

    // By id too; key counts follow; names are matched exactly, and a shared name needs the id.
    const acme = JSON.parse((await run(['org', 'create', '--name', 'Acme', '--data', data, '--json'])).stdout).org;
    expect((await run(['keys', 'create', '--org', acme.id, '--name', 'second', '--data', data, '--json'])).code).toBe(0);
    const counts = JSON.parse((await run(['org', 'list', '--data', data, '--json'])).stdout).orgs.map((o: { name: string; active_keys: number }) => [o.name, o.active_keys]);
    expect(counts).toEqual([['Default organization', 2], ['Acme', 2]]);
    const human = await run(['org', 'list', '--data', data]);
    expect(human.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+KEYS$/);
    expect(human.stdout).toMatch(new RegExp(`^${acme.id}\\s+Acme\\s+2$`, 'm'));
    const unknown = await run(['keys', 'create', '--org', 'acme', '--name', 'x', '--data', data]);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/organization acme not found \(waymark org list shows them\)/);
    const twin = JSON.parse((await run(['org', 'create', '--name', 'Acme', '--data', data, '--json'])).stdout).org;
    const ambiguous = await run(['keys', 'create', '--org', 'Acme', '--name', 'x', '--data', data]);
    expect(ambiguous.code).not.toBe(0);
    expect(ambiguous.stderr).toContain(`2 organizations are named Acme: give the id instead (${acme.id}, ${twin.id})`);
  });

  it('without --json the commands print readable lines with the key', async () => {
    const data = dir();
    const res = await run(['org', 'create', '--name', 'Readable', '--data', data]);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/Organization Readable \(/);
    expect(res.stdout).toMatch(KEY_RE);
    expect(() => JSON.parse(res.stdout)).toThrow();
  });

  it('every flag reads its WAYMARK_* variable', async () => {
    const data = dir();
    // org create: WAYMARK_DATA and WAYMARK_JSON
    const org = await run(['org', 'create', '--name', 'Env'], { WAYMARK_DATA: data, WAYMARK_JSON: 'true' });
    expect(org.code).toBe(0);
    const parsed = JSON.parse(org.stdout);
    expect(JSON.parse((await run(['keys', 'create', '--org', parsed.org.id, '--name', 'k'], { WAYMARK_DATA: data, WAYMARK_JSON: '1' })).stdout).key.name).toBe('k');
    // WAYMARK_JSON=false means human output, not JSON.
    expect((await run(['org', 'create', '--name', 'Env2'], { WAYMARK_DATA: data, WAYMARK_JSON: 'false' })).stdout).toMatch(/^Organization Env2/);

    // serve: WAYMARK_HOST, WAYMARK_PORT, WAYMARK_DATA, WAYMARK_SCAN_BASE
    const srv = await serveWithEnv({ WAYMARK_HOST: '127.0.0.1', WAYMARK_PORT: '0', WAYMARK_DATA: data, WAYMARK_SCAN_BASE: 'https://w.example.com/' });
    expect(await banner(srv)).toContain(join(data, 'waymark.sqlite'));
    const node = await apiRequest(srv.url, 'POST', '/nodes', { label: 'x', function_type: 'redirect', payload: { url: 'https://a.b' } }, parsed.api_key);
    expect(node.body.data.url).toBe(`https://w.example.com/v/${node.body.data.slug}`);
    expect(await srv.stop()).toBe(0);
  });

  it('WAYMARK_TRUST_PROXY=false leaves proxy headers ignored; true honours them; junk is refused', async () => {
    const data = dir();
    const org = JSON.parse((await run(['org', 'create', '--name', 'P', '--data', data, '--json'])).stdout);
    const key = org.api_key as string;
    const manifestUrl = async (url: string) => {
      const b = await apiRequest(url, 'POST', '/batches', { label: 'b', prefix: 'TP', quantity: 1, function_type: 'redirect' }, key);
      return eventually(async () => {
        const res = await fetch(`${url}/v1/batches/${b.body.data.id}`, { headers: { authorization: `Bearer ${key}`, 'x-forwarded-proto': 'https' } });
        const got = ((await res.json()) as { data: { status: string; manifest_url: string } }).data;
        return got.status === 'ready' ? got.manifest_url : undefined;
      }, 60_000, 'the batch ready');
    };
    const off = await serveWithEnv({ WAYMARK_PORT: '0', WAYMARK_DATA: data, WAYMARK_TRUST_PROXY: 'false' });
    expect(await manifestUrl(off.url)).toMatch(/^http:\/\//);
    await off.stop();
    const on = await serveWithEnv({ WAYMARK_PORT: '0', WAYMARK_DATA: data, WAYMARK_TRUST_PROXY: 'true' });
    expect(await manifestUrl(on.url)).toMatch(/^https:\/\//);
    await on.stop();
    const flag = await spawnServer(data, ['--trust-proxy']);
    expect(await manifestUrl(flag.url)).toMatch(/^https:\/\//);
    await flag.stop();
    const junk = await run(['serve', '--port', '0', '--data', data], { WAYMARK_TRUST_PROXY: 'maybe' });
    expect(junk.code).toBe(2);
    expect(junk.stderr).toMatch(/WAYMARK_TRUST_PROXY/);
  });

  it('--help describes every command and option with its environment variable', async () => {
    const root = await run(['--help']);
    expect(root.code).toBe(0);
    for (const cmd of ['serve', 'org', 'keys']) expect(root.stdout).toContain(cmd);
    const serve = await run(['serve', '--help']);
    expect(serve.code).toBe(0);
    for (const s of ['--host', '--port', '--data', '--scan-base', '--trust-proxy', 'WAYMARK_HOST', 'WAYMARK_PORT', 'WAYMARK_DATA', 'WAYMARK_SCAN_BASE', 'WAYMARK_TRUST_PROXY']) {
      expect(serve.stdout).toContain(s);
    }
    const org = await run(['org', 'create', '--help']);
    for (const s of ['--name', '--data', '--json', 'WAYMARK_JSON']) expect(org.stdout).toContain(s);
    const keys = await run(['keys', 'create', '--help']);
    for (const s of ['--org', '--name', '--plan', 'developer', 'pro', 'enterprise', '--json']) expect(keys.stdout).toContain(s);
    expect((await run(['--version'])).stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('refuses bad serve options with exit code 2 and a message', async () => {
    const data = dir();
    const port = await run(['serve', '--port', '70000', '--data', data]);
    expect(port.code).toBe(2);
    expect(port.stderr).toMatch(/invalid port/);
    const scan = await run(['serve', '--port', '0', '--data', data, '--scan-base', 'ftp://x']);
    expect(scan.code).toBe(2);
    expect(scan.stderr).toMatch(/--scan-base/);
  });

  it('one server per SQLite data directory: a second serve is refused in one line; commands and a restart after a crash still work', async () => {
    const data = dir();
    const first = await spawnServer(data, [], { WAYMARK_NO_NFC: '1' }, { backend: 'sqlite' });
    try {
      const second = await run(['serve', '--port', '0', '--data', data], { WAYMARK_NO_NFC: '1' });
      expect(second.code).toBe(2);
      expect(second.stderr).toMatch(/cannot use data directory .*another Waymark server is serving it/);
      expect(second.stderr).not.toMatch(/\n\s+at /);
      // Short-lived commands share the directory with the running server.
      const org = await run(['org', 'create', '--name', 'Beside', '--data', data, '--json']);
      expect(org.code).toBe(0);
      expect((await apiRequest(first.url, 'GET', '/nodes', undefined, JSON.parse(org.stdout).api_key)).status).toBe(200);
    } finally {
      // The operating system drops the lock with the process: nothing stale is left to clean up.
      await first.kill();
    }
    const again = await spawnServer(data, [], { WAYMARK_NO_NFC: '1' }, { backend: 'sqlite' });
    await again.stop();
  });

  it('a port in use or an unusable data directory is a one-line error and exit 2, not a stack trace', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const res = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('WAYMARK_')));
        const child = spawn(process.execPath, [CLI, 'serve', '--port', String(port), '--data', dir()], { env: clean });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.once('exit', (code) => resolve({ code, stderr }));
      });
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(new RegExp(`port ${port} .*already in use`));
      expect(res.stderr).not.toMatch(/\n\s+at /);
    } finally {
      blocker.close();
    }
    const file = join(dir(), 'not-a-dir');
    writeFileSync(file, 'x');
    for (const args of [['serve', '--port', '0', '--data', file], ['org', 'create', '--name', 'x', '--data', file]]) {
      const res = await run(args);
      expect(res.code).toBe(2);
      expect(res.stderr).toMatch(/cannot use data directory/);
      expect(res.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
