// End to end through the real stack: HTTP API -> NFC service -> bridge child -> nfc-pcsc ->
// pcscd -> vpcd -> the virtual tags.
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../server/serve.ts';
import { apiRequest, tempDataDir } from '../support/server.ts';
import { nfcSkipReason, startPcscSandbox, type PcscSandbox } from './harness.ts';
import { expectedNdefUri, manifest, openEvents, readyBatch, until, type Api } from './support.ts';
import { ATR_ISO_DEP, ATR_MIFARE_CLASSIC_1K, VirtualTag } from './virtual-tag.ts';
import { rmSync } from 'node:fs';

const skip = nfcSkipReason();

function uidOf(tag: VirtualTag): string {
  return [...tag.uid].map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join(':');
}

describe.skipIf(skip !== null)('NFC tag programming through the API (pcscd + vpcd + virtual tags)', () => {
  let sandbox: PcscSandbox;
  let server: RunningServer;
  let apiKey: string;
  let api: Api;
  let dataDir: string;

  beforeAll(async () => {
    sandbox = await startPcscSandbox();
    dataDir = tempDataDir('waymark-nfc-');
    server = await startServer({
      host: '0.0.0.0',
      port: 0,
      dataDir,
      scanBase: 'https://wm.example',
      logger: { info: () => {}, error: (m, e) => console.error(m, e) },
      nfc: { env: { ...process.env, ...sandbox.env }, restartDelayMs: 200 },
    });
    // An enterprise key with generous limits: the tests poll the status endpoint.
    const big = { standard_per_minute: 100_000, batch_per_minute: 1000, burst_per_second: 10_000 };
    apiKey = (await server.app.services.keys.createKey(server.firstRun!.orgId, 'nfc tests', 'enterprise', big)).apiKey;
    const port = new URL(server.url).port;
    api = (method, path, body) => apiRequest(`http://127.0.0.1:${port}`, method, path, body, apiKey);
    await until('reader ready', async () => (await api('GET', '/nfc/status')).body.data.reader.state === 'ready');
  });

  afterAll(async () => {
    await server?.close();
    await sandbox?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('writes a 10-node batch: each tag holds exactly its manifest row URL, nodes active, batch deployed', async () => {
    const batch = await readyBatch(api, 'CAFE', 10);
    const port = new URL(server.url).port;
    const stream = openEvents(`http://127.0.0.1:${port}`, apiKey);
    await stream.ready;
    const started = await api('POST', '/nfc/session', { batch_id: batch.id });
    expect(started.status).toBe(201);
    expect(started.body.data.next.serial).toBe('CAFE-001');
    expect(started.body.data.counts).toMatchObject({ total: 10, pending: 10 });

    const tags: VirtualTag[] = [];
    for (let i = 0; i < 10; i++) {
      const tag = new VirtualTag({ model: (['NTAG213', 'NTAG215', 'NTAG216'] as const)[i % 3] });
      tags.push(tag);
      await tag.insert(sandbox.endpoint(0));
      const e = await stream.next((ev) => ev.type === 'tag.written' || ev.type === 'tag.refused');
      expect(e.type, JSON.stringify(e.data)).toBe('tag.written');
      expect(e.data.serial).toBe(`CAFE-${String(i + 1).padStart(3, '0')}`);
      const off = stream.next((ev) => ev.type === 'tag.off');
      await tag.remove();
      await off;
      if (i === 0) {
        const b = await api('GET', `/batches/${batch.id}`);
        expect(b.body.data.status).toBe('writing');
      }
    }

    const m = await manifest(api, batch.id);
    expect(m.batch.status).toBe('deployed');
    expect(m.nodes).toHaveLength(10);
    m.nodes.forEach((row, i) => {
      const tag = tags[i]!;
      expect(row.url).toBe(`https://wm.example/v/${row.slug}`);
      expect(tag.ndefMessage()).toEqual(expectedNdefUri(`${row.url}?nfc`));
      expect(row.hardware_id).toBe(uidOf(tag));
      expect(row.status).toBe('active');
    });
    const events = server.db
      .prepare("SELECT data_json FROM outbox_events WHERE type = 'tag.written' ORDER BY seq")
      .all() as Array<{ data_json: string }>;
    expect(events.map((e) => (JSON.parse(e.data_json) as { node: { slug: string } }).node.slug)).toEqual(m.nodes.map((n) => n.slug));
    const session = await api('GET', '/nfc/session');
    expect(session.body.data).toBeNull(); // completed
    stream.close();
  });

  it('refuses unsupported, too small, read-only tags, and a tag with no tag presented', async () => {
    const batch = await readyBatch(api, 'REF', 1);
    const { nodes } = await manifest(api, batch.id);
    const slug = nodes[0]!.slug;
    const none = await api('POST', '/nfc/write', { slug, timeout_ms: 1000 });
    expect(none.status).toBe(409);
    expect(none.body).toEqual({ data: null, error: 'No tag was presented within 1 s.' });

    const cases: Array<[ConstructorParameters<typeof VirtualTag>[0], RegExp]> = [
      [{ atr: ATR_MIFARE_CLASSIC_1K }, /MIFARE Classic is not an NFC Forum Type 2 tag/],
      [{ atr: ATR_ISO_DEP }, /ISO-DEP .* or a phone/],
      [{ ccSize: 2 }, /Tag too small: the URL needs \d+ bytes, this tag holds 16\. Use a bigger tag: NTAG213 \(144 bytes\)/],
      [{ readOnly: true }, /read-only or locked/],
      [{ lockedPages: true }, /read-only or locked/],
    ];
    for (const [opts, message] of cases) {
      const tag = new VirtualTag(opts);
      await tag.insert(sandbox.endpoint(0));
      await until('card seen', async () => (await api('GET', '/nfc/status')).body.data.reader.cards.length === 1);
      const r = await api('POST', '/nfc/write', { slug });
      expect(r.status).toBe(409);
      expect(r.body.error).toMatch(message);
      expect(tag.stats.writes).toBe(0);
      await tag.remove();
      await until('card gone', async () => (await api('GET', '/nfc/status')).body.data.reader.cards.length === 0);
    }
    const node = await api('GET', `/nodes/${slug}`);
    expect(node.body.data.hardware_id).toBeNull();
  });

  it('refuses a tag written and bound for another node (lift it) unless reassigning', async () => {
    const batch = await readyBatch(api, 'UID', 2);
    const [a, b] = (await manifest(api, batch.id)).nodes;
    const tag = new VirtualTag();
    await tag.insert(sandbox.endpoint(0));
    const first = await api('POST', '/nfc/write', { slug: a!.slug });
    expect(first.status).toBe(200);
    expect(first.body.data.hardware_id).toBe(uidOf(tag));
    const refused = await api('POST', '/nfc/write', { slug: b!.slug });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe('Already written as UID-001 — lift it.');
    expect(tag.ndefMessage()).toEqual(expectedNdefUri(`${a!.url}?nfc`));
    const moved = await api('POST', '/nfc/write', { slug: b!.slug, reassign: true });
    expect(moved.status).toBe(200);
    expect(moved.body.data.reassigned_from).toBe(a!.slug);
    expect(tag.ndefMessage()).toEqual(expectedNdefUri(`${b!.url}?nfc`));
    expect((await api('GET', `/nodes/${a!.slug}`)).body.data.hardware_id).toBeNull();
    expect((await api('GET', `/nodes/${b!.slug}`)).body.data.hardware_id).toBe(uidOf(tag));
    await tag.remove();
    await until('card gone', async () => (await api('GET', '/nfc/status')).body.data.reader.cards.length === 0);
  });

  it('a tag removed mid-write asks to present it again, and the retry succeeds', async () => {
    const batch = await readyBatch(api, 'PULL', 1);
    const [row] = (await manifest(api, batch.id)).nodes;
    const tag = new VirtualTag();
    tag.pullAfter(3);
    await tag.insert(sandbox.endpoint(0));
    await until('card seen', async () => (await api('GET', '/nfc/status')).body.data.reader.cards.length === 1);
    const r = await api('POST', '/nfc/write', { slug: row!.slug });
    expect(r.status).toBe(409);
    expect(r.body.error).toBe('Tag removed during the write: present it to the reader again to retry.');
    expect(tag.ndefMessage()).toEqual(Buffer.alloc(0)); // empty, never half a URL
    expect((await api('GET', `/nodes/${row!.slug}`)).body.data.hardware_id).toBeNull();
    await until('card gone', async () => (await api('GET', '/nfc/status')).body.data.reader.cards.length === 0);
    const pending = api('POST', '/nfc/write', { slug: row!.slug, timeout_ms: 10_000 });
    await tag.insert(sandbox.endpoint(0));
    const ok = await pending;
    expect(ok.status).toBe(200);
    expect(tag.ndefMessage()).toEqual(expectedNdefUri(`${row!.url}?nfc`));
    await tag.remove();
    await until('card gone', async () => (await api('GET', '/nfc/status')).body.data.reader.cards.length === 0);
  });

  it('session skip, redo and report lost; the batch deploys when every node is written or lost', async () => {
    const batch = await readyBatch(api, 'SKIP', 3);
    const rows = (await manifest(api, batch.id)).nodes;
    let s = await api('POST', '/nfc/session', { batch_id: batch.id });
    expect(s.body.data.next.serial).toBe('SKIP-001');
    s = await api('POST', '/nfc/session/skip');
    expect(s.body.data.next.serial).toBe('SKIP-002');
    const present = async (tag: VirtualTag, written: number) => {
      await tag.insert(sandbox.endpoint(0));
      await until('written', async () => (await api('GET', '/nfc/session')).body.data?.counts.written === written);
      await tag.remove();
      await until('card gone', async () => (await api('GET', '/nfc/status')).body.data.reader.cards.length === 0);
    };
    const t2 = new VirtualTag();
    await present(t2, 1);
    s = await api('GET', '/nfc/session');
    expect(s.body.data.next.serial).toBe('SKIP-003');
    s = await api('POST', '/nfc/session/redo', {});
    expect(s.body.data.next.serial).toBe('SKIP-002');
    const t2b = new VirtualTag();
    await present(t2b, 1);
    expect((await api('GET', `/nodes/${rows[1]!.slug}`)).body.data.hardware_id).toBe(uidOf(t2b));
    s = await api('POST', '/nfc/session/lost', {});
    expect(s.body.data.next).toMatchObject({ serial: 'SKIP-001', revisit: true });
    expect((await api('GET', `/nodes/${rows[2]!.slug}`)).body.data.status).toBe('lost');
    const t1 = new VirtualTag();
    await t1.insert(sandbox.endpoint(0));
    await until('session done', async () => (await api('GET', '/nfc/session')).body.data === null);
    await t1.remove();
    await until('card gone', async () => (await api('GET', '/nfc/status')).body.data.reader.cards.length === 0);
    expect((await api('GET', `/batches/${batch.id}`)).body.data.status).toBe('deployed');
    expect(t1.ndefMessage()).toEqual(expectedNdefUri(`${rows[0]!.url}?nfc`));
  });

  it('locks a tag only with an explicit confirmation; a locked tag is then refused as read-only', async () => {
    const batch = await readyBatch(api, 'LOCK', 2);
    const [a, b] = (await manifest(api, batch.id)).nodes;
    const unconfirmed = await api('POST', '/nfc/write', { slug: a!.slug, lock: true });
    expect(unconfirmed.status).toBe(422);
    expect(unconfirmed.body.details).toEqual({ confirm_lock: 'Locking a tag is permanent: set confirm_lock to true to confirm' });
    const tag = new VirtualTag({ model: 'NTAG216' });
    await tag.insert(sandbox.endpoint(0));
    const locked = await api('POST', '/nfc/write', { slug: a!.slug, lock: true, confirm_lock: true, timeout_ms: 20_000 });
    expect(locked.status).toBe(200);
    expect(locked.body.data.locked).toBe(true);
    expect(tag.ndefMessage()).toEqual(expectedNdefUri(`${a!.url}?nfc`));
    await tag.remove();
    await until('card gone', async () => (await api('GET', '/nfc/status')).body.data.reader.cards.length === 0);
    await tag.insert(sandbox.endpoint(0));
    const again = await api('POST', '/nfc/write', { slug: b!.slug, reassign: true, timeout_ms: 20_000 });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatch(/read-only or locked/);
    expect(tag.ndefMessage()).toEqual(expectedNdefUri(`${a!.url}?nfc`));
    await tag.remove();
    await until('card gone', async () => (await api('GET', '/nfc/status')).body.data.reader.cards.length === 0);
  });

  it('reports no PC/SC daemon while pcscd is down and recovers when it is back', async () => {
    await sandbox.stopPcscd();
    await until('no daemon', async () => (await api('GET', '/nfc/status')).body.data.reader.state === 'no_daemon');
    const batch = await readyBatch(api, 'DMN', 1);
    const [row] = (await manifest(api, batch.id)).nodes;
    const r = await api('POST', '/nfc/write', { slug: row!.slug });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/pcscd/);
    await sandbox.startPcscd();
    await until('ready again', async () => (await api('GET', '/nfc/status')).body.data.reader.state === 'ready');
    const tag = new VirtualTag();
    await tag.insert(sandbox.endpoint(0));
    const ok = await api('POST', '/nfc/write', { slug: row!.slug, timeout_ms: 20_000 });
    expect(ok.status).toBe(200);
    await tag.remove();
    await until('card gone', async () => (await api('GET', '/nfc/status')).body.data.reader.cards.length === 0);
  });

  it('answers 403 to a non-loopback client and 401 without a key', async ({ skip }) => {
    expect((await apiRequest(`http://127.0.0.1:${new URL(server.url).port}`, 'GET', '/nfc/status', undefined, null)).status).toBe(401);
    const lan = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal);
    // The 401 above ran; the 403 needs an address of this machine that is not loopback.
    if (!lan) return skip('no non-loopback IPv4 address on this machine (isLoopback has its unit test)');
    const r = await apiRequest(`http://${lan.address}:${new URL(server.url).port}`, 'GET', '/nfc/status', undefined, apiKey);
    expect(r.status).toBe(403);
    expect(r.body.error).toMatch(/only available to the console on this machine/);
  });
});

describe.skipIf(skip !== null)('NFC with no reader plugged in', () => {
  it('reports no reader and refuses writes with that reason', async () => {
    const sandbox = await startPcscSandbox({ noReaders: true });
    const dataDir = tempDataDir('waymark-nfc-');
    const server = await startServer({
      host: '127.0.0.1',
      port: 0,
      dataDir,
      logger: { info: () => {}, error: () => {} },
      nfc: { env: { ...process.env, ...sandbox.env } },
    });
    try {
      const big = { standard_per_minute: 100_000, batch_per_minute: 1000, burst_per_second: 10_000 };
      const key = (await server.app.services.keys.createKey(server.firstRun!.orgId, 'nfc tests', 'enterprise', big)).apiKey;
      const api: Api = (m, p, b) => apiRequest(server.url, m, p, b, key);
      if (sandbox.namespaced) {
        await until('no reader', async () => (await api('GET', '/nfc/status')).body.data.reader.state === 'no_reader');
        const batch = await readyBatch(api, 'NOR', 1);
        const [row] = (await manifest(api, batch.id)).nodes;
        const r = await api('POST', '/nfc/write', { slug: row!.slug, allow_local_scan_base: true }); // a loopback scan base: the reader is what is tested
        expect(r.status).toBe(409);
        expect(r.body.error).toMatch(/No NFC reader connected/);
      }
    } finally {
      await server.close();
      await sandbox.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
