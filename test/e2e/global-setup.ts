// Builds the console and starts the real headless server (`waymark serve`) on a fresh data
// directory for the whole e2e run; the tests read its address and keys from the environment.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM } from '../support/system.ts';

const root = join(import.meta.dirname, '..', '..');

export default async function globalSetup(): Promise<() => Promise<void>> {
  if (!existsSync(CHROMIUM)) return async () => {};
  execFileSync(process.execPath, [join(root, 'scripts', 'build-console.ts'), '--if-stale'], { stdio: 'inherit' });

  const dataDir = mkdtempSync(join(tmpdir(), 'waymark-e2e-'));
  const child = spawn(process.execPath, [join(root, 'server', 'cli.ts'), 'serve', '--port', '0', '--data', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('WAYMARK_'))),
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${out}`)), 20_000);
    const check = () => {
      if (/Console: \S+#key=wmk_\w+/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', check);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${out}`)));
  });
  const url = /listening on (http:\/\/\S+)/.exec(out)![1]!;
  const firstKey = /#key=(wmk_\w+)/.exec(out)![1]!;

  // The console under test signs in with an enterprise-plan key so that a long run of UI steps
  // is not throttled by the developer plan's 100 requests per minute; the first key (developer)
  // is used by the sign-in tests.
  const instance = (await (await fetch(`${url}/v1/instance`, { headers: { authorization: `Bearer ${firstKey}` } })).json()) as { data: { organization: { id: string } } };
  const created = execFileSync(
    process.execPath,
    [join(root, 'server', 'cli.ts'), 'keys', 'create', '--org', instance.data.organization.id, '--name', 'E2E console', '--plan', 'enterprise', '--data', dataDir, '--json'],
    { encoding: 'utf8' },
  );
  const consoleKey = (JSON.parse(created.trim().split('\n').pop()!) as { api_key: string }).api_key;

  process.env.WAYMARK_E2E_URL = url;
  process.env.WAYMARK_E2E_FIRST_KEY = firstKey;
  process.env.WAYMARK_E2E_KEY = consoleKey;
  process.env.WAYMARK_E2E_DATA = dataDir;

  return async () => {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  };
}
