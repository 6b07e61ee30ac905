import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { apiRequest, repoRoot, spawnServer, tempDataDir, type ServerProcess } from '../support/server.ts';

function cli(args: string[]): string {
  const res = spawnSync(process.execPath, [join(repoRoot, 'server', 'cli.ts'), ...args], { encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`waymark ${args.join(' ')} failed: ${res.stderr}`);
  return res.stdout;
}

// SIGKILL the real server process while it generates a 500-node batch, restart it on the same
// data directory, and check the batch completes with every serial exactly once.
describe('crash during batch generation', () => {
  const dataDir = tempDataDir('waymark-crash-');
  let proc: ServerProcess | undefined;
  afterAll(async () => {
    await proc?.kill();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('resumes after SIGKILL without losing or duplicating a node', async () => {
    const org = JSON.parse(cli(['org', 'create', '--name', 'Crash', '--data', dataDir, '--json'])) as { org: { id: string } };
    // An enterprise key, so polling as fast as possible is not rate limited.
    const { api_key: key } = JSON.parse(cli(['keys', 'create', '--org', org.org.id, '--name', 'poller', '--plan', 'enterprise', '--data', dataDir, '--json'])) as { api_key: string };

    proc = await spawnServer(dataDir);
    let killedMidway: { id: string; generated: number } | undefined;
    const batchIds: string[] = [];
    for (let attempt = 0; attempt < 5 && !killedMidway; attempt++) {
      const created = await apiRequest(proc.url, 'POST', '/batches', { label: 'Big', prefix: 'CR', quantity: 500, function_type: 'redirect', base_payload: { url: 'https://example.com/c' } }, key);
      expect(created.status, created.text).toBe(201);
      batchIds.push(created.body.data.id);
      for (;;) {
        const b = (await apiRequest(proc.url, 'GET', `/batches/${created.body.data.id}`, undefined, key)).body.data;
        if (b.status !== 'generating') break;
        // Kill early in the batch, so that it is still generating when the signal lands.
        if (b.nodes_generated > 0 && b.nodes_generated <= 300) {
          await proc.kill();
          killedMidway = { id: b.id, generated: b.nodes_generated };
          break;
        }
      }
    }
    expect(killedMidway, 'the server was killed while a batch was generating').toBeDefined();
    expect(killedMidway!.generated).toBeLessThan(500);

    // Straight after the crash the file holds only whole chunks: never a partial transaction.
    const db = new BetterSqlite3(join(dataDir, 'waymark.sqlite'), { readonly: true });
    const stored = db.prepare('SELECT nodes_generated, status FROM batches WHERE id = ?').get(killedMidway!.id) as { nodes_generated: number; status: string };
    const count = (db.prepare('SELECT COUNT(*) AS n FROM nodes WHERE batch_id = ?').get(killedMidway!.id) as { n: number }).n;
    db.close();
    // (A chunk or two may commit between the last poll and the signal.)
    expect(stored.status === 'generating' || (stored.status === 'ready' && stored.nodes_generated === 500)).toBe(true);
    expect(count).toBe(stored.nodes_generated);
    expect(count % 50 === 0 || count === 500).toBe(true);

    proc = await spawnServer(dataDir);
    for (const id of batchIds) {
      let b: Record<string, unknown> = {};
      for (let i = 0; i < 2000; i++) {
        b = (await apiRequest(proc.url, 'GET', `/batches/${id}`, undefined, key)).body.data;
        if (b.status !== 'generating') break;
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(b).toMatchObject({ status: 'ready', nodes_generated: 500 });
      const manifest = await apiRequest(proc.url, 'GET', `/batches/${id}/manifest`, undefined, key);
      expect(manifest.status).toBe(200);
      const rows = manifest.body.data.nodes as Array<{ serial: string; slug: string }>;
      expect(rows).toHaveLength(500);
      expect(new Set(rows.map((r) => r.slug)).size).toBe(500);
    }
    // Across all batches of the prefix, serials run CR-001 … without a gap or a repeat.
    const check = new BetterSqlite3(join(dataDir, 'waymark.sqlite'), { readonly: true });
    const serials = check.prepare("SELECT serial FROM nodes WHERE serial LIKE 'CR-%' ORDER BY serial_number").pluck().all() as string[];
    const slugRows = (check.prepare('SELECT COUNT(*) AS n FROM slugs').get() as { n: number }).n;
    const nodeRows = (check.prepare('SELECT COUNT(*) AS n FROM nodes').get() as { n: number }).n;
    check.close();
    expect(serials).toEqual(Array.from({ length: batchIds.length * 500 }, (_, i) => `CR-${String(i + 1).padStart(3, '0')}`));
    // No slug was minted for a node that a rolled-back chunk never stored.
    expect(slugRows).toBe(nodeRows);
    await proc.stop();
    proc = undefined;
  }, 60_000);

  it('SIGTERM during generation exits 0 and the next start finishes the batch', async () => {
    const dir = tempDataDir('waymark-term-');
    try {
      const org = JSON.parse(cli(['org', 'create', '--name', 'Term', '--data', dir, '--json'])) as { org: { id: string } };
      const { api_key: key } = JSON.parse(cli(['keys', 'create', '--org', org.org.id, '--name', 'k', '--plan', 'enterprise', '--data', dir, '--json'])) as { api_key: string };
      let server = await spawnServer(dir);
      const created = await apiRequest(server.url, 'POST', '/batches', { label: 'T', prefix: 'TERM', quantity: 500, function_type: 'redirect' }, key);
      expect(created.status).toBe(201);
      await server.stop();
      expect(server.child.exitCode).toBe(0);
      server = await spawnServer(dir);
      let b: Record<string, unknown> = {};
      for (let i = 0; i < 2000; i++) {
        b = (await apiRequest(server.url, 'GET', `/batches/${created.body.data.id}`, undefined, key)).body.data;
        if (b.status !== 'generating') break;
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(b).toMatchObject({ status: 'ready', nodes_generated: 500 });
      expect((await apiRequest(server.url, 'GET', `/nodes?batch_id=${created.body.data.id}&limit=1`, undefined, key)).body.total).toBe(500);
      await server.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
