import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../support/receiver.ts';
import { type ServerProcess, apiRequest, repoRoot, spawnServer, tempDataDir } from '../support/server.ts';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/** Private, loopback, link-local and metadata receivers, in the forms a LAN box would be probed with. */
const PRIVATE_RECEIVERS = [
  'http://192.168.1.20:8080/hook',
  'http://127.0.0.1:9/hook',
  'http://localhost:8080/hook',
  'http://169.254.169.254/latest/meta-data/',
  'http://[::127.0.0.1]/hook',
  'http://[::ffff:10.0.0.1]/hook',
  'http://[fe80::1]/hook',
];

describe('waymark serve: webhook receivers by listening address', () => {
  let proc: ServerProcess | undefined;
  let dataDir: string | undefined;
  afterEach(async () => {
    await proc?.stop();
    proc = undefined;
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const start = async (args: string[], env: NodeJS.ProcessEnv = {}) => {
    dataDir = tempDataDir('waymark-webhook-cli-');
    proc = await spawnServer(dataDir, args, env);
    const key = await eventually(() => /(wmk_[A-Za-z0-9]+)/.exec(proc!.output())?.[1], 5000, 'the first API key');
    // An instance on 0.0.0.0 prints its LAN address; the test talks to it over loopback only.
    const url = proc.url.replace(/^http:\/\/[^/]+:(\d+)$/, 'http://127.0.0.1:$1');
    return (body: unknown) => apiRequest(url, 'POST', '/webhooks', body, key);
  };
  const hook = (url: string) => ({ url, events: ['node.scanned'] });

  it('listening on loopback only: accepts LAN and loopback receivers (the desktop app, a dev box)', async () => {
    const post = await start([]);
    for (const url of PRIVATE_RECEIVERS) expect((await post(hook(url))).status, url).toBe(201);
  });

  it('listening beyond loopback: refuses private, loopback, link-local and metadata receivers by default', async () => {
    const post = await start(['--host', '0.0.0.0']);
    for (const url of PRIVATE_RECEIVERS) {
      const res = await post(hook(url));
      expect(res.status, url).toBe(422);
      expect(res.body.details.url, url).toMatch(/private or loopback/);
    }
    expect((await post(hook('https://hooks.example.com/x'))).status).toBe(201);
  });

  it('listening beyond loopback with --webhooks-allow-private (or WAYMARK_WEBHOOKS_ALLOW_PRIVATE=1): accepts them', async () => {
    const post = await start(['--host', '0.0.0.0', '--webhooks-allow-private']);
    for (const url of PRIVATE_RECEIVERS) expect((await post(hook(url))).status, url).toBe(201);
    await proc!.stop();
    proc = undefined;
    const viaEnv = await start(['--host', '0.0.0.0'], { WAYMARK_WEBHOOKS_ALLOW_PRIVATE: '1' });
    expect((await viaEnv(hook('http://192.168.1.20:8080/hook'))).status).toBe(201);
  }, 60_000);

  it('--webhooks-public-only (or WAYMARK_WEBHOOKS_PUBLIC_ONLY=1) refuses them even on loopback', async () => {
    const post = await start(['--webhooks-public-only']);
    for (const url of PRIVATE_RECEIVERS) expect((await post(hook(url))).status, url).toBe(422);
    expect((await post(hook('https://hooks.example.com/x'))).status).toBe(201);
    await proc!.stop();
    proc = undefined;
    const viaEnv = await start([], { WAYMARK_WEBHOOKS_PUBLIC_ONLY: '1' });
    expect((await viaEnv(hook('http://localhost:8080/hook'))).status).toBe(422);
  }, 60_000);

  it('refuses both flags at once', () => {
    const res = spawnSync(process.execPath, [join(repoRoot, 'server', 'cli.ts'), 'serve', '--port', '0', '--webhooks-public-only', '--webhooks-allow-private'], { encoding: 'utf8' });
    expect(res.status).toBe(2);
    expect(res.stderr).toMatch(/contradict/);
  });
});
