// Batches on both backends: serial reservation, chunked generation (one transaction per chunk),
// leases, the life cycle through deployment, manifests and label sheets, and NFC session items.
import { afterEach, describe, expect, it } from 'vitest';
import { backends, insertOrg, nodeServices, openTestStore, type TestStore } from '../../../test/support/nodeStores.ts';
import { ManualClock } from '../../platform/clock.ts';
import { NfcRepo } from '../nfc/index.ts';

for (const { dialect, skip } of backends) {
  describe.skipIf(skip !== null)(`batches, printers and NFC sessions on ${dialect}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    let t: TestStore | undefined;
    afterEach(async () => {
      await t?.close();
      t = undefined;
    });

    async function setup() {
      t = await openTestStore(dialect);
      const clock = new ManualClock('2026-11-25T10:00:00.000Z');
      const services = nodeServices(t.store, clock);
      const orgId = await insertOrg(t.store);
      const types = async () => (await services.outbox.readAfter(t!.store.db, 0)).map((e) => e.type);
      return { store: t.store, clock, orgId, types, ...services };
    }

    const input = { label: 'Doors', prefix: 'DR', function_type: 'redirect' as const, base_payload: { url: 'https://example.com/d' } };

    it('reserves serials per prefix, generates a chunk per call from the last commit, completes once', async () => {
      const { store, orgId, batches, types } = await setup();
      const a = await batches.create(orgId, { ...input, quantity: 7 });
      const b = await batches.create(orgId, { ...input, quantity: 3 });
      const other = await batches.create(orgId, { ...input, prefix: 'XY', quantity: 2 });
      expect([a.serial_start, b.serial_start, other.serial_start]).toEqual([1, 8, 1]);

      expect(await batches.generateChunk(a.id, 3)).toBe(false);
      expect(await batches.get(orgId, a.id)).toMatchObject({ status: 'generating', nodes_generated: 3 });
      expect(await batches.generateChunk(a.id, 3)).toBe(false);
      expect(await batches.generateChunk(a.id, 3)).toBe(true);
      expect(await batches.generateChunk(a.id, 3)).toBe(true); // nothing left: no more nodes
      expect(await batches.get(orgId, a.id)).toMatchObject({ status: 'ready', nodes_generated: 7 });
      const { nodes } = await batches.manifest(orgId, a.id);
      expect(nodes.map((n) => n.serial)).toEqual(['DR-001', 'DR-002', 'DR-003', 'DR-004', 'DR-005', 'DR-006', 'DR-007']);
      expect(new Set(nodes.map((n) => n.slug)).size).toBe(7);
      expect(nodes.every((n) => n.status === 'in_production' && n.url.startsWith('https://wm.example/v/'))).toBe(true);
      expect(await types()).toEqual(['batch.completed']);
      const api = await batches.toApi((await batches.get(orgId, a.id)), 'https://api.example/v1');
      expect(api).toMatchObject({ manifest_url: `https://api.example/v1/batches/${a.id}/manifest`, nodes_written: 0 });
      // A serial exists once per batch in the database itself.
      const node = await store.db.selectFrom('nodes').select(['id', 'serial_number']).where('batch_id', '=', a.id).executeTakeFirstOrThrow();
      await expect(
        store.db.insertInto('nodes').values({ id: 'dup', org_id: orgId, slug: 'DUPLICATE', label: 'x', function_type: 'redirect', payload_json: '{}', status: 'draft', batch_id: a.id, serial_number: node.serial_number, created_at: 'x', updated_at: 'x' }).execute(),
      ).rejects.toThrow();
      await expect(batches.manifest(orgId, b.id)).rejects.toThrow(/not ready/);
    });

    it('leases: a claimed batch is generated only by its owner, and free again when done or failed', async () => {
      const { clock, orgId, batches, types } = await setup();
      const a = await batches.create(orgId, { ...input, quantity: 4 });
      const mine = { owner: 'me', ms: 60_000 };
      const theirs = { owner: 'them', ms: 60_000 };
      expect(await batches.claimNext(mine, true)).toBe(a.id);
      // Held by "me": another owner finds nothing to claim and may not generate it.
      expect(await batches.claimNext(theirs, true)).toBeUndefined();
      expect(await batches.generateChunk(a.id, 2, theirs)).toBe(true);
      expect((await batches.get(orgId, a.id)).nodes_generated).toBe(0);
      expect(await batches.generateChunk(a.id, 2, mine)).toBe(false);
      expect(await batches.nextLeaseExpiry('them')).toBe(clock.now() + 60_000);
      // The lease runs out: "them" takes over from the last committed chunk; "me" stops.
      clock.advance(60_001);
      expect(await batches.claimNext(theirs, true)).toBe(a.id);
      expect(await batches.generateChunk(a.id, 2, mine)).toBe(true);
      expect(await batches.generateChunk(a.id, 2, theirs)).toBe(true);
      expect(await batches.get(orgId, a.id)).toMatchObject({ status: 'ready', nodes_generated: 4 });
      expect(await batches.nextLeaseExpiry('me')).toBeNull();

      const b = await batches.create(orgId, { ...input, quantity: 2 });
      expect(await batches.claimNext(mine, true)).toBe(b.id);
      await batches.fail(b.id, 'disk full');
      expect(await batches.get(orgId, b.id)).toMatchObject({ status: 'failed', failure_reason: 'disk full' });
      await batches.retry(orgId, b.id);
      // Retried: anyone may claim it (SQLite: every lease but the owner's counts as stale).
      expect(await batches.claimNext(theirs, dialect === 'postgres')).toBe(b.id);
      expect(await types()).toEqual(['batch.completed', 'batch.failed']);
    });

    it('deploys through the nodes feature: in-production nodes become active with node.updated', async () => {
      const { orgId, batches, nodes, types } = await setup();
      const a = await batches.create(orgId, { ...input, quantity: 3 });
      while (!(await batches.generateChunk(a.id, 50))) {
        // one chunk is enough
      }
      await expect(batches.update(orgId, a.id, { status: 'writing' })).resolves.toMatchObject({ status: 'writing' });
      const deployed = await batches.update(orgId, a.id, { status: 'deployed', label: 'Deployed doors' });
      expect(deployed).toMatchObject({ status: 'deployed', label: 'Deployed doors' });
      await expect(batches.update(orgId, a.id, { status: 'writing' })).rejects.toThrow(/Cannot change batch status/);
      const { rows } = await nodes.list(orgId, { batch_id: a.id, limit: 10, offset: 0 });
      expect(rows.map((n) => n.status)).toEqual(['active', 'active', 'active']);
      expect(await types()).toEqual(['batch.completed', 'node.updated', 'node.updated', 'node.updated']);
      expect((await batches.list(orgId, 'deployed', 10, 0)).total).toBe(1);
    });

    it('printer profiles and label sheets', async () => {
      const { orgId, batches, print } = await setup();
      const p = await print.createPrinter(orgId, { name: 'Zebra', layout: 'avery-l7160', offset_x: 0.5 });
      expect(await print.getPrinter(orgId, p.id)).toMatchObject({ name: 'Zebra', layout: 'avery-l7160', offset_x: 0.5, offset_y: 0 });
      expect(await print.updatePrinter(orgId, p.id, { offset_y: -1.25 })).toMatchObject({ offset_x: 0.5, offset_y: -1.25 });
      await expect(print.updatePrinter(orgId, 'nope', { offset_y: 1 })).rejects.toThrow();
      expect((await print.listPrinters(orgId, 10, 0)).total).toBe(1);
      const a = await batches.create(orgId, { ...input, quantity: 2 });
      await batches.generateChunk(a.id, 10);
      const pdf = await print.batchPdf(orgId, a.id, { printer: p.id, caption: 'label', cut_marks: false, start: 0 });
      expect(pdf).toMatchObject({ labels: 2, pages: 1 });
      expect((await pdf.buffer()).subarray(0, 5).toString()).toBe('%PDF-');
      await print.removePrinter(orgId, p.id);
      await expect(print.getPrinter(orgId, p.id)).rejects.toThrow();
      await expect(print.removePrinter(orgId, p.id)).rejects.toThrow();
    });

    it('NFC session items: pending before skipped in serial order, updates, write log', async () => {
      const { store, orgId, batches, nfc } = await setup();
      const a = await batches.create(orgId, { ...input, quantity: 3 });
      await batches.generateChunk(a.id, 10);
      const started = await nfc.startSession(orgId, a.id);
      expect(started).toMatchObject({ status: 'active', counts: { total: 3, pending: 3 }, next: { serial: 'DR-001' } });
      expect((await nfc.skip(orgId)).next?.serial).toBe('DR-002');
      const lost = await nfc.reportLost(orgId, 'DR-002');
      expect(lost).toMatchObject({ counts: { pending: 1, skipped: 1, lost: 1 }, next: { serial: 'DR-003', revisit: false } });
      const repo = new NfcRepo();
      const session = (await repo.activeSession(store.db))!;
      const items = await repo.items(store.db, session.id);
      expect(items.map((i) => i.state)).toEqual(['skipped', 'lost', 'pending']);
      await repo.logWrite(store.db, { org_id: orgId, node_id: items[2]!.node_id, session_id: session.id, uid: '04:AA', url: 'https://x', tag_type: 'ntag215', locked: 0, written_at: 'now' });
      expect(await repo.writesForNode(store.db, items[2]!.node_id)).toMatchObject([{ uid: '04:AA', locked: 0 }]);
      await nfc.stopSession(orgId);
      expect(await nfc.session(orgId)).toBeNull();
    });
  });
}
