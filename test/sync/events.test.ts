/**
 * GET /v1/sync/events: the console's live sync status (instead of polling GET /sync/status). The
 * status comes at once, then again only when it changes.
 */
import { get, type ClientRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';
import { run } from '../support/rows.ts';

interface Stream {
  events: Array<{ type: string; data: unknown }>;
  encoding: string | undefined;
  close(): void;
}

function open(url: string, key: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const events: Stream['events'] = [];
    let buffer = '';
    const req: ClientRequest = get(url, { headers: { authorization: `Bearer ${key}`, 'accept-encoding': 'gzip, br' } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}`));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        const blocks = buffer.split('\n\n');
        buffer = blocks.pop() ?? '';
        for (const block of blocks) {
          const type = /^event: (.+)$/m.exec(block)?.[1];
          const data = /^data: (.+)$/m.exec(block)?.[1];
          if (type && data) events.push({ type, data: JSON.parse(data) });
        }
      });
      resolve({ events, encoding: res.headers['content-encoding'], close: () => req.destroy() });
    });
    req.on('error', (err) => ((err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err)));
  });
}

// The conflict is written straight into the database (either backend), as sync itself records one.
describe('sync status stream', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('sends the status at once, then again only when it changes, uncompressed', async () => {
    const stream = await open(`${server.url}/v1/sync/events`, server.apiKey);
    try {
      await expect.poll(() => stream.events.length).toBe(1);
      expect(stream.encoding).toBeUndefined();
      expect(stream.events[0]).toMatchObject({ type: 'status', data: { mode: 'standalone', conflicts: [] } });

      const addConflict = (block: number) =>
        run(server.running.store, 'INSERT INTO sync_conflicts (kind, detail_json, detected_at) VALUES (?, ?, ?)', 'block_conflict', JSON.stringify({ block, reason: 'held_by_other_site' }), new Date().toISOString());
      await addConflict(7);
      await expect.poll(() => stream.events.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
      expect(stream.events[1]).toMatchObject({ type: 'status', data: { conflicts: [{ kind: 'block_conflict', detail: { block: 7 } }] } });
      await addConflict(8);
      await expect.poll(() => (stream.events.at(-1)?.data as { conflicts: unknown[] }).conflicts.length, { timeout: 10_000 }).toBe(2);
      // One event per change: the checks in between (every 2 s) found nothing new to send.
      expect(stream.events.map((e) => (e.data as { conflicts: unknown[] }).conflicts.length)).toEqual([0, 1, 2]);
    } finally {
      stream.close();
    }
  });

  it('needs a key', async () => {
    const res = await fetch(`${server.url}/v1/sync/events`);
    expect(res.status).toBe(401);
  });
});
