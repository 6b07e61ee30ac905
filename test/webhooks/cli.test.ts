import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../support/receiver.ts';
import { type ServerProcess, apiRequest, spawnServer, tempDataDir } from '../support/server.ts';

describe('waymark serve: webhook options', () => {
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
    return (body: unknown) => apiRequest(proc!.url, 'POST', '/webhooks', body, key);
  };

  it('accepts LAN and loopback receivers by default (a site instance)', async () => {
    const post = await start([]);
    expect((await post({ url: 'http://192.168.1.20:8080/hook', events: ['node.scanned'] })).status).toBe(201);
    expect((await post({ url: 'http://127.0.0.1:9/hook', events: ['node.scanned'] })).status).toBe(201);
  });

  it('refuses them with --webhooks-public-only', async () => {
    const post = await start(['--webhooks-public-only']);
    const res = await post({ url: 'http://192.168.1.20:8080/hook', events: ['node.scanned'] });
    expect(res.status).toBe(422);
    expect(res.body.details.url).toMatch(/private or loopback/);
    expect((await post({ url: 'https://hooks.example.com/x', events: ['node.scanned'] })).status).toBe(201);
  });

  it('refuses them with WAYMARK_WEBHOOKS_PUBLIC_ONLY=1', async () => {
    const post = await start([], { WAYMARK_WEBHOOKS_PUBLIC_ONLY: '1' });
    expect((await post({ url: 'http://localhost:8080/hook', events: ['node.scanned'] })).status).toBe(422);
  });
});
