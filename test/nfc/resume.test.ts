// Crashes in the middle of a batch writing session: the server process is SIGKILLed (1) with the
// last written tag still on the reader: the restarted server resumes at the next serial and
// says that tag is already written as the previous serial (lift it; no Reassign); (2) in the
// middle of a tag's write: the tag is left with an empty NDEF message and is written for the same
// serial after the restart; (3) after the tag was lifted during the verify read: presented again
// it is recognised and bound without a second write, and a second tag with the same URL is
// refused with that said. No node is written twice.
import { rmSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { databaseFile } from '../../server/serve.ts';
import { apiRequest, spawnServer, tempDataDir, type ServerProcess } from '../support/server.ts';
import { nfcSkipReason, startPcscSandbox, type PcscSandbox } from './harness.ts';
import { expectedNdefUri, freshOrg, killWithChildren, manifest, openEvents, readyBatch, until, type Api } from './support.ts';
import { VirtualTag } from './virtual-tag.ts';

const skip = nfcSkipReason();

function uidOf(tag: VirtualTag): string {
  return [...tag.uid].map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join(':');
}

describe.skipIf(skip !== null)('NFC session after a crash', () => {
  let sandbox: PcscSandbox;
  let dataDir: string;
  let server: ServerProcess | undefined;

  beforeAll(async () => {
    sandbox = await startPcscSandbox();
    dataDir = tempDataDir('waymark-nfc-crash-');
  });
  // Each test's last server, also when the test failed midway (the next test starts its own).
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });
  afterAll(async () => {
    await sandbox?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('resumes at the right serial and writes no node twice', async () => {
    const key = freshOrg(dataDir);
    const env = { ...sandbox.env };
    server = await spawnServer(dataDir, ['--scan-base', 'https://wm.example'], env);
    let api: Api = (m, p, b) => apiRequest(server!.url, m, p, b, key);
    await until('reader ready', async () => (await api('GET', '/nfc/status')).body.data.reader.state === 'ready');
    const batch = await readyBatch(api, 'CRASH', 10);
    const rows = (await manifest(api, batch.id)).nodes;
    expect((await api('POST', '/nfc/session', { batch_id: batch.id })).status).toBe(201);

    const tags = Array.from({ length: 10 }, () => new VirtualTag());
    let stream = openEvents(server.url, key);
    await stream.ready;
    for (let i = 0; i < 4; i++) {
      await tags[i]!.insert(sandbox.endpoint(0));
      const e = await stream.next((ev) => ev.type === 'tag.written' || ev.type === 'tag.refused');
      expect(e.type).toBe('tag.written');
      if (i < 3) {
        const off = stream.next((ev) => ev.type === 'tag.off');
        await tags[i]!.remove();
        await off;
      }
    }
    stream.close();
    // Tag 4 (CRASH-004) stays on the reader through the crash.
    await killWithChildren(server);
    server = await spawnServer(dataDir, ['--scan-base', 'https://wm.example'], env);
    api = (m, p, b) => apiRequest(server!.url, m, p, b, key);
    stream = openEvents(server.url, key);
    await stream.ready;

    const s = await api('GET', '/nfc/session');
    expect(s.body.data.next.serial).toBe('CRASH-005');
    expect(s.body.data.counts).toMatchObject({ written: 4, pending: 6 });
    // The restarted bridge sees tag 4 again: a finished tag, to be lifted (not "bound to another node — Reassign?").
    // The bridge may see it before this stream opened: the session keeps its last refusal.
    const refused = await until('the refusal of tag 4', async () => {
      const r = (await api('GET', '/nfc/session')).body.data.last_refusal;
      return r ? r : undefined;
    });
    expect(refused).toMatchObject({ code: 'already_written', serial: 'CRASH-005', bound_to: { serial: 'CRASH-004' } });
    expect(refused.message).toBe('Already written as CRASH-004 — lift it and place the tag for CRASH-005.');
    expect(stream.events.some((e) => e.type === 'tag.written')).toBe(false);
    const off = stream.next((ev) => ev.type === 'tag.off');
    await tags[3]!.remove();
    await off;

    // CRASH-005: the server dies in the middle of writing its tag (a page written, the reply
    // held back), then comes back. The half-written tag holds an empty NDEF message; presented
    // again it is written for CRASH-005, which is still the serial asked for.
    const held = tags[4]!.holdAfter(3);
    await tags[4]!.insert(sandbox.endpoint(0));
    await held;
    stream.close();
    await killWithChildren(server);
    tags[4]!.release();
    expect(tags[4]!.ndefMessage()).toEqual(Buffer.alloc(0));
    server = await spawnServer(dataDir, ['--scan-base', 'https://wm.example'], env);
    api = (m, p, b) => apiRequest(server!.url, m, p, b, key);
    stream = openEvents(server.url, key);
    await stream.ready;
    // Still on the reader, it is written for CRASH-005 as the bridge starts: maybe before this
    // stream opened, so the session's counts say it (and the end checks each node written once).
    const after = await until('CRASH-005 written on restart', async () => {
      const data = (await api('GET', '/nfc/session')).body.data;
      return data.counts.written === 5 ? data : undefined;
    });
    expect(after.next.serial).toBe('CRASH-006');
    expect(tags[4]!.ndefMessage()).toEqual(expectedNdefUri(`${rows[4]!.url}?nfc`));
    expect(stream.events.some((e) => e.type === 'tag.refused')).toBe(false);
    const off5 = stream.next((ev) => ev.type === 'tag.off');
    await tags[4]!.remove();
    await off5;

    for (let i = 5; i < 10; i++) {
      await tags[i]!.insert(sandbox.endpoint(0));
      const e = await stream.next((ev) => ev.type === 'tag.written' || ev.type === 'tag.refused');
      expect(e.type, JSON.stringify(e.data)).toBe('tag.written');
      expect(e.data.serial).toBe(rows[i]!.serial);
      const gone = stream.next((ev) => ev.type === 'tag.off');
      await tags[i]!.remove();
      await gone;
    }
    stream.close();

    const m = await manifest(api, batch.id);
    expect(m.batch.status).toBe('deployed');
    m.nodes.forEach((row, i) => {
      expect(tags[i]!.ndefMessage()).toEqual(expectedNdefUri(`${row.url}?nfc`));
    });
    await server.stop();
    server = undefined;
    const db = new BetterSqlite3(databaseFile(dataDir), { readonly: true });
    const writes = db.prepare('SELECT node_id, COUNT(*) AS n FROM nfc_writes GROUP BY node_id').all() as Array<{ node_id: string; n: number }>;
    const events = db.prepare("SELECT COUNT(*) FROM outbox_events WHERE type = 'tag.written'").pluck().get();
    db.close();
    expect(writes).toHaveLength(10);
    expect(writes.every((w) => w.n === 1)).toBe(true);
    expect(events).toBe(10);
    // Tag 4 was written once, before the crash: as many page writes as any other tag (same URL length).
    expect(tags[3]!.stats.writes).toBe(tags[0]!.stats.writes);
    expect(tags[4]!.stats.presentations).toBe(1); // the same presentation, written after the restart
  }, 120_000); // three server processes started on a shared, loaded machine

  it('a tag lifted during the verify read before a crash is recognised and bound after a verify; a second tag with its URL is refused as such', async () => {
    const dir = tempDataDir('waymark-nfc-lift-');
    try {
      const key = freshOrg(dir);
      const env = { ...sandbox.env };
      server = await spawnServer(dir, ['--scan-base', 'https://wm.example'], env);
      let api: Api = (m, p, b) => apiRequest(server!.url, m, p, b, key);
      await until('reader ready', async () => (await api('GET', '/nfc/status')).body.data.reader.state === 'ready');
      const batch = await readyBatch(api, 'LIFT', 3);
      const rows = (await manifest(api, batch.id)).nodes;
      expect((await api('POST', '/nfc/session', { batch_id: batch.id })).status).toBe(201);
      let stream = openEvents(server.url, key);
      await stream.ready;

      // LIFT-001's tag is lifted during the verify read: fully written, bound to nothing. Then a crash.
      const a = new VirtualTag();
      a.pullAtRead(1);
      await a.insert(sandbox.endpoint(0));
      const lifted = await stream.next((ev) => ev.type === 'tag.refused' || ev.type === 'tag.written');
      expect(lifted.data).toMatchObject({ code: 'tag_removed', serial: 'LIFT-001' });
      expect(a.ndefMessage()).toEqual(expectedNdefUri(`${rows[0]!.url}?nfc`));
      const writesOfA = a.stats.writes;
      stream.close();
      await killWithChildren(server!);

      server = await spawnServer(dir, ['--scan-base', 'https://wm.example'], env);
      api = (m, p, b) => apiRequest(server!.url, m, p, b, key);
      await until('reader ready', async () => (await api('GET', '/nfc/status')).body.data.reader.state === 'ready');
      stream = openEvents(server.url, key);
      await stream.ready;
      expect((await api('GET', '/nfc/session')).body.data.next.serial).toBe('LIFT-001');
      await a.insert(sandbox.endpoint(0));
      const recognised = await stream.next((ev) => ev.type === 'tag.refused' || ev.type === 'tag.written');
      expect(recognised.type, JSON.stringify(recognised.data)).toBe('tag.written');
      expect(recognised.data).toMatchObject({ serial: 'LIFT-001', recognised: true, hardware_id: uidOf(a) });
      expect(a.stats.writes).toBe(writesOfA); // verified, not written again
      let off = stream.next((ev) => ev.type === 'tag.off');
      await a.remove();
      await off;

      // LIFT-002: lifted during the verify read too, and the technician writes a new tag instead.
      const b = new VirtualTag();
      b.pullAtRead(1);
      await b.insert(sandbox.endpoint(0));
      expect((await stream.next((ev) => ev.type === 'tag.refused' || ev.type === 'tag.written')).data).toMatchObject({ code: 'tag_removed', serial: 'LIFT-002' });
      await until('card gone', async () => (await api('GET', '/nfc/status')).body.data.reader.cards.length === 0);
      const c = new VirtualTag();
      await c.insert(sandbox.endpoint(0));
      const second = await stream.next((ev) => ev.type === 'tag.refused' || ev.type === 'tag.written');
      expect(second.data).toMatchObject({ serial: 'LIFT-002', recognised: false, hardware_id: uidOf(c) });
      off = stream.next((ev) => ev.type === 'tag.off');
      await c.remove();
      await off;

      // The first LIFT-002 tag comes back while LIFT-003 is asked for: two tags would open LIFT-002, and the screen says so.
      await b.insert(sandbox.endpoint(0));
      const duplicate = await stream.next((ev) => ev.type === 'tag.refused' || ev.type === 'tag.written');
      expect(duplicate.type).toBe('tag.refused');
      expect(duplicate.data).toMatchObject({ code: 'duplicate_url', serial: 'LIFT-003', holds: { serial: 'LIFT-002', hardware_id: uidOf(c) } });
      expect(duplicate.data.message).toContain(`This tag holds the URL of LIFT-002, which is bound to another tag (UID ${uidOf(c)}): two tags would open LIFT-002.`);
      const reading = (await api('GET', '/nfc/tag')).body.data;
      expect(reading).toMatchObject({ content: 'node', node: { serial: 'LIFT-002' }, bound_to: null });
      expect(reading.warning).toContain(`LIFT-002 is bound to another tag (UID ${uidOf(c)}): two tags open LIFT-002`);
      expect(b.ndefMessage()).toEqual(expectedNdefUri(`${rows[1]!.url}?nfc`));
      // Pressing "Write tag on reader" writes LIFT-003 over it: no second tag with LIFT-002's URL is left.
      const over = await api('POST', '/nfc/session/retry', {});
      expect(over.status, over.text).toBe(200);
      expect(over.body.data).toMatchObject({ serial: 'LIFT-003', hardware_id: uidOf(b) });
      expect(b.ndefMessage()).toEqual(expectedNdefUri(`${rows[2]!.url}?nfc`));
      stream.close();

      const m = await manifest(api, batch.id);
      expect(m.batch.status).toBe('deployed');
      expect(m.nodes.map((n) => n.hardware_id)).toEqual([uidOf(a), uidOf(c), uidOf(b)]);
      await b.remove();
      await server.stop();
      server = undefined;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
