// The NFC domain over a real SQLite file and an in-process reader (no PC/SC needed).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ATR_MIFARE_CLASSIC_1K, VirtualTag } from '../../../test/nfc/virtual-tag.ts';
import { FakeReader } from '../../../test/nfc/fake-reader.ts';
import { createApp, type App } from '../../app.ts';
import { makeConfig } from '../../config.ts';
import { openDatabase, type Database } from '../../db/database.ts';
import { SqliteStore } from '../../db/sqliteStore.ts';
import { systemClock } from '../../platform/clock.ts';
import { decodeUriMessage, encodeUriMessage } from './ndef.ts';
import type { NfcEvent } from './service.ts';

let dir: string;
let db: Database;
let store: SqliteStore;
let app: App;
let reader: FakeReader;
let orgId: string;

async function boot(): Promise<void> {
  db = openDatabase(join(dir, 'waymark.sqlite'));
  reader = new FakeReader();
  store = new SqliteStore(db);
  app = await createApp({ store, clock: systemClock, config: makeConfig({ scanBase: 'https://wm.example' }), logger: { info: () => {}, error: () => {} }, nfc: reader });
  app.services.nfc.start();
}

async function makeBatch(prefix: string, quantity: number): Promise<string> {
  const batch = await app.services.batches.create(orgId, { label: prefix, prefix, quantity, function_type: 'redirect', base_payload: { url: 'https://example.com' } });
  while (!(await app.services.batches.generateChunk(batch.id, 100))) {
    // generate here rather than in the background
  }
  return batch.id;
}

/** Presents a tag and waits for the service's verdict. */
async function present(tag: VirtualTag): Promise<NfcEvent> {
  const verdict = new Promise<NfcEvent>((resolve) => {
    const off = app.services.nfc.subscribe((e) => {
      if (e.type === 'tag.written' || e.type === 'tag.refused') {
        off();
        resolve(e);
      }
    });
  });
  await reader.present(tag);
  return verdict;
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'waymark-nfc-svc-'));
  await boot();
  orgId = (await app.services.keys.createOrgWithKey('Org', 'key')).org.id;
});

afterEach(() => {
  app.services.nfc.stop();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('NFC sessions (domain)', () => {
  it('walks the serials, binds UIDs, activates nodes, records tag.written, deploys the batch', async () => {
    const batchId = await makeBatch('CAFE', 3);
    const s = await app.services.nfc.startSession(orgId, batchId);
    expect(s.next?.serial).toBe('CAFE-001');
    const tags = [new VirtualTag(), new VirtualTag(), new VirtualTag()];
    for (const [i, tag] of tags.entries()) {
      const e = await present(tag);
      expect(e.type).toBe('tag.written');
      reader.remove();
      if (i === 0) expect((await app.services.batches.get(orgId, batchId)).status).toBe('writing');
    }
    const { nodes } = await app.services.batches.manifest(orgId, batchId);
    nodes.forEach((n, i) => {
      expect(decodeUriMessage(tags[i]!.ndefMessage()!)).toBe(`${n.url}?nfc`);
      expect(n.status).toBe('active');
      expect(n.hardware_id).toMatch(/^04(:[0-9A-F]{2}){6}$/);
    });
    expect((await app.services.batches.get(orgId, batchId)).status).toBe('deployed');
    expect(await app.services.nfc.session(orgId)).toBeNull();
    const types = (await app.services.outbox.readAfter(store.db, 0)).map((e) => e.type);
    expect(types.filter((t) => t === 'tag.written')).toHaveLength(3);
  });

  it('does not write the tag that stays on the reader again, and refuses it for the next serial', async () => {
    const batchId = await makeBatch('STAY', 2);
    await app.services.nfc.startSession(orgId, batchId);
    const tag = new VirtualTag();
    expect((await present(tag)).type).toBe('tag.written');
    const writes = tag.stats.writes;
    // Re-presenting the same tag: a finished STAY-001 tag, so STAY-002 is refused with "lift it" (not Reassign).
    reader.remove();
    const again = await present(tag);
    expect(again).toMatchObject({ type: 'tag.refused', data: { code: 'already_written', serial: 'STAY-002', bound_to: { serial: 'STAY-001' } } });
    expect(again.data).toMatchObject({ message: 'Already written as STAY-001 — lift it and place the tag for STAY-002.' });
    expect(tag.stats.writes).toBe(writes);
    // The operator chooses Reassign: the tag moves to STAY-002, STAY-001 is asked for again.
    const moved = await app.services.nfc.retry(orgId, { reassign: true });
    expect(moved).toMatchObject({ serial: 'STAY-002', reassigned_from: (await app.services.batches.manifest(orgId, batchId)).nodes[0]!.slug });
    expect((await app.services.nfc.session(orgId))?.next?.serial).toBe('STAY-001');
  });

  it('resumes at the right serial after a restart (new app on the same database)', async () => {
    const batchId = await makeBatch('RES', 4);
    await app.services.nfc.startSession(orgId, batchId);
    await present(new VirtualTag());
    reader.remove();
    const second = new VirtualTag();
    await present(second);
    // "Crash": drop everything in memory; the tag stays on the reader.
    app.services.nfc.stop();
    db.close();
    await boot();
    const s = await app.services.nfc.session(orgId);
    expect(s?.next?.serial).toBe('RES-003');
    expect(s?.counts).toMatchObject({ written: 2, pending: 2 });
    expect((await present(second)).type).toBe('tag.refused');
    reader.remove();
    expect((await present(new VirtualTag())).type).toBe('tag.written');
    expect((await app.services.nfc.session(orgId))?.next?.serial).toBe('RES-004');
  });

  it('a tag bound to a node but holding something else is "bound to another node", which Reassign answers', async () => {
    const batchId = await makeBatch('BND', 2);
    await app.services.nfc.startSession(orgId, batchId);
    const tag = new VirtualTag();
    expect((await present(tag)).type).toBe('tag.written');
    reader.remove();
    tag.holdNdef(encodeUriMessage('https://elsewhere.example/'));
    const again = await present(tag);
    expect(again).toMatchObject({ type: 'tag.refused', data: { code: 'uid_bound', serial: 'BND-002', bound_to: { serial: 'BND-001' } } });
  });

  it('a written tag that was never bound is recognised and bound after a verify, for whichever node it holds', async () => {
    const batchId = await makeBatch('REC', 2);
    const { nodes } = await app.services.batches.manifest(orgId, batchId);
    const tag = new VirtualTag();
    tag.holdNdef(encodeUriMessage(`${nodes[1]!.url}?nfc`)); // REC-002's tag, never bound
    await app.services.nfc.startSession(orgId, batchId);
    const e = await present(tag);
    expect(e).toMatchObject({ type: 'tag.written', data: { serial: 'REC-002', recognised: true } });
    expect(tag.stats.writes).toBe(0);
    expect((await app.services.nfc.session(orgId))?.next?.serial).toBe('REC-001');
    // Only what Waymark writes (with ?nfc) is recognised: a tag with REC-001's bare scan URL is written, not just verified.
    reader.remove();
    const bare = new VirtualTag();
    bare.holdNdef(encodeUriMessage(nodes[0]!.url));
    const written = await present(bare);
    expect(written).toMatchObject({ type: 'tag.written', data: { serial: 'REC-001', recognised: false } });
    expect(decodeUriMessage(bare.ndefMessage()!)).toBe(`${nodes[0]!.url}?nfc`);
  });

  it('refuses unsupported cards and records the attempt; refuses a non-ready batch', async () => {
    const batchId = await makeBatch('UNS', 1);
    await app.services.nfc.startSession(orgId, batchId);
    const e = await present(new VirtualTag({ atr: ATR_MIFARE_CLASSIC_1K }));
    expect(e).toMatchObject({ type: 'tag.refused', data: { code: 'unsupported_card' } });
    expect((await app.services.nfc.session(orgId))?.last_refusal?.code).toBe('unsupported_card');
    await app.services.nfc.stopSession(orgId);
    const pending = await app.services.batches.create(orgId, { label: 'x', prefix: 'GEN', quantity: 1, function_type: 'redirect' });
    await expect(app.services.nfc.startSession(orgId, pending.id)).rejects.toThrow(/must be ready or writing/);
  });

  it('one session at a time', async () => {
    const a = await makeBatch('ONE', 1);
    const b = await makeBatch('TWO', 1);
    await app.services.nfc.startSession(orgId, a);
    expect((await app.services.nfc.startSession(orgId, a)).batch_id).toBe(a); // resuming the same is fine
    await expect(app.services.nfc.startSession(orgId, b)).rejects.toThrow(/Another tag writing session is active/);
  });
});
