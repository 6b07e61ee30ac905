// NTAG21x mirror and password through the NFC domain on both backends, over the in-process reader
// and the virtual tag; mirrored tags are registered with the tap proof feature (its ntag21x kind,
// checked at scan time: test/nfc/ntag21x.test.ts scans the taps over HTTP).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeReader } from '../../../test/nfc/fake-reader.ts';
import { VirtualTag } from '../../../test/nfc/virtual-tag.ts';
import { backends, insertOrg, nodeServices, openTestStore, type TestStore } from '../../../test/support/nodeStores.ts';
import { ManualClock } from '../../platform/clock.ts';
import { InstanceKeys } from '../../platform/instanceKeys.ts';
import { FileSecretStore } from '../../platform/secrets.ts';
import { createTapProofs, NTAG21X_KIND } from '../tapproofs/index.ts';
import { decodeUriMessage } from './ndef.ts';
import { MIRROR_PLACEHOLDER } from './ntag21x.ts';
import { formatUid } from './program.ts';
import type { NfcEvent, TagWritten } from './service.ts';
import { derivePassword, masterKeySecretName } from './tagPasswords.ts';

const input = { label: 'Doors', prefix: 'DR', function_type: 'redirect' as const, base_payload: { url: 'https://example.com/d' } };

/** The `m` parameter a phone sends after tapping the tag. */
function tap(tag: VirtualTag): string {
  return new URL(decodeUriMessage(tag.phoneTap()!)!).searchParams.get('m')!;
}

for (const { dialect, skip } of backends) {
  describe.skipIf(skip !== null)(`NTAG21x evidence and passwords on ${dialect}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    let t: TestStore | undefined;
    let dir: string | undefined;
    afterEach(async () => {
      await t?.close();
      t = undefined;
      if (dir) rmSync(dir, { recursive: true, force: true });
      dir = undefined;
    });

    async function setup() {
      t = await openTestStore(dialect);
      dir = mkdtempSync(join(tmpdir(), 'waymark-ntag21x-'));
      const clock = new ManualClock('2026-11-26T08:00:00.000Z');
      const reader = new FakeReader();
      const secrets = new FileSecretStore(join(dir, 'secrets.json'));
      const services = nodeServices(t.store, clock, { nfcDevice: reader, instanceKeys: new InstanceKeys(secrets, null) });
      services.nfc.start();
      const orgId = await insertOrg(t.store);
      const { service: tapProofs } = createTapProofs({ store: t.store, clock, keyStore: secrets });
      services.nfc.useMirrorRegistry((tx, tag) => tapProofs.registerTag(tx, { ...tag, kind: NTAG21X_KIND, key_version: 0 }));
      /** Presents a tag and waits for the service's verdict. */
      const present = async (tag: VirtualTag): Promise<NfcEvent> => {
        const verdict = new Promise<NfcEvent>((resolve) => {
          const off = services.nfc.subscribe((e) => {
            if (e.type === 'tag.written' || e.type === 'tag.refused') {
              off();
              resolve(e);
            }
          });
        });
        await reader.present(tag);
        return verdict;
      };
      return { store: t.store, clock, orgId, reader, secrets, tapProofs, present, ...services };
    }

    it('a batch session mirrors and protects every tag; N taps give N increasing counters the server accepts; replays, edits and other UIDs are flagged', async () => {
      const { orgId, batches, nfc, reader, secrets, tapProofs, present, nodes, store } = await setup();
      const batch = await batches.create(orgId, { ...input, quantity: 2 });
      await batches.generateChunk(batch.id, 10);
      const session = await nfc.startSession(orgId, batch.id, { mirror: true, protect: true });
      expect(session).toMatchObject({ mirror_tags: true, protect_tags: true });
      expect(session.next!.url).toMatch(new RegExp(`\\?nfc&m=${MIRROR_PLACEHOLDER}$`));
      const tags = [new VirtualTag({ model: 'NTAG213' }), new VirtualTag({ model: 'NTAG216' })];
      const written: TagWritten[] = [];
      for (const tag of tags) {
        const e = await present(tag);
        expect(e.type).toBe('tag.written');
        written.push(e.data as TagWritten);
        reader.remove();
      }
      expect(written.map((w) => ({ mirror: w.mirror, protected: w.protected }))).toEqual([
        { mirror: true, protected: true },
        { mirror: true, protected: true },
      ]);
      expect((await nfc.session(orgId)) ?? null).toBeNull(); // completed
      // The password is derived from the organization's master key in the secret store, never stored per tag.
      const stored = JSON.parse(secrets.get(masterKeySecretName(orgId))!) as { current: number; keys: Record<string, string> };
      expect(stored.current).toBe(1);
      const master = stored.keys['1']!;
      expect(master).toMatch(/^[0-9a-f]{64}$/);
      const dump = JSON.stringify(await store.db.selectFrom('nfc_writes').select(['uid', 'url', 'mirror', 'protected']).execute());
      const pwd = derivePassword(Buffer.from(master, 'hex'), written[0]!.hardware_id).pwd;
      expect(dump).not.toContain(pwd);
      expect(dump).not.toContain(master);
      // A field writer without the password cannot rewrite the tag.
      tags[0]!.powerOn();
      expect(tags[0]!.apdu(Buffer.from('FFD600050400000000', 'hex'))!.toString('hex')).toBe('6300');

      const node = (await nodes.get(orgId, written[0]!.slug))!;
      // Registered for the scan-time check: the UID as upper-case hex, no counter accepted yet.
      expect(await tapProofs.tagsOfNode(node.id)).toEqual([
        { org_id: orgId, uid: tags[0]!.uid.toString('hex').toUpperCase(), kind: NTAG21X_KIND, node_id: node.id, key_version: 0, last_counter: -1 },
      ]);
      // Every phone tap mirrors this tag's UID with a counter one higher than the last.
      const taps = [tap(tags[0]!), tap(tags[0]!), tap(tags[0]!)];
      expect(taps.every((m) => m.startsWith(`${node.hardware_id!.replaceAll(':', '')}x`))).toBe(true);
      const counters = taps.map((m) => parseInt(m.slice(15), 16));
      expect(counters).toEqual([counters[0]!, counters[0]! + 1, counters[0]! + 2]);
    });

    it('rewrites its own protected tag with the derived password; refuses a tag protected by someone else, saying why', async () => {
      const { orgId, nodes, nfc, reader } = await setup();
      const a = await nodes.create(orgId, { label: 'A', function_type: 'redirect', payload: { url: 'https://example.com/a' } });
      const b = await nodes.create(orgId, { label: 'B', function_type: 'redirect', payload: { url: 'https://example.com/b' } });
      const tag = new VirtualTag();
      await reader.present(tag);
      expect(await nfc.writeNode(orgId, a.slug, { protect: true })).toMatchObject({ protected: true, mirror: false });
      reader.remove();
      // Rewritten for another node: authenticates first (the write log says it is protected).
      await reader.present(tag);
      expect(await nfc.writeNode(orgId, b.slug, { reassign: true, protect: true })).toMatchObject({ protected: true, reassigned_from: a.slug });
      reader.remove();
      // Plain this time: authenticates, writes, and lifts the protection as asked.
      await reader.present(tag);
      expect(await nfc.writeNode(orgId, a.slug, { reassign: true })).toMatchObject({ protected: false, reassigned_from: b.slug });
      reader.remove();
      expect(tag.failedAuths).toEqual([]);
      tag.powerOn();
      expect(tag.apdu(Buffer.from('FFD600050400000000', 'hex'))!.toString('hex')).toBe('9000');

      // A tag protected by another organization (another master key).
      const foreign = new VirtualTag();
      foreign.memory.write('1122334455660000', 0x2b * 4, 'hex'); // PWD 11223344, PACK 5566
      foreign.memory[0x29 * 4 + 3] = 0x04; // AUTH0: user memory protected
      const writesBefore = foreign.stats.writes;
      await reader.present(foreign);
      for (const options of [{}, { protect: true }, { mirror: true }]) {
        await expect(nfc.writeNode(orgId, a.slug, { reassign: true, ...options })).rejects.toMatchObject({
          code: 'password_protected',
          message: expect.stringMatching(/password-protected by someone else/),
        });
      }
      expect(foreign.stats.writes).toBe(writesBefore);
      expect((await nodes.get(orgId, a.slug)).hardware_id).toBe(formatUid(tag.uid)); // still the first tag
    });

    it("each tag of a batch says its own protection (mirror, password, both, none) in tag.written, the session's list and the manifest; a rewrite replaces it", async () => {
      const { orgId, batches, nfc, reader, present, nodes } = await setup();
      const batch = await batches.create(orgId, { ...input, quantity: 5 });
      await batches.generateChunk(batch.id, 10);
      const slugs = (await nodes.list(orgId, { batch_id: batch.id, limit: 5, offset: 0 })).rows.map((n) => n.slug);
      // The session mirrors; its list of recent tags says so while it runs.
      await nfc.startSession(orgId, batch.id, { mirror: true });
      const first = await present(new VirtualTag({ model: 'NTAG213' }));
      expect(first.data).toMatchObject({ mirror: true, protected: false, protection: 'ntag21x_mirror' });
      reader.remove();
      expect((await nfc.session(orgId))!.recent.map((r) => r.protection)).toEqual(['ntag21x_mirror']);
      await nfc.stopSession(orgId);
      // Single writes for the others: password only, both, plain; the fifth stays unwritten.
      const options = [{ protect: true }, { mirror: true, protect: true }, {}];
      const tags = options.map(() => new VirtualTag({ model: 'NTAG215' }));
      const written: TagWritten[] = [];
      for (const [i, opts] of options.entries()) {
        await reader.present(tags[i]!);
        written.push(await nfc.writeNode(orgId, slugs[i + 1]!, opts));
        reader.remove();
      }
      expect(written.map((w) => w.protection)).toEqual(['ntag21x_password', 'ntag21x_mirror_password', 'none']);
      const manifest = async () => (await batches.manifest(orgId, batch.id)).nodes.map((n) => n.tag_protection);
      expect(await manifest()).toEqual(['ntag21x_mirror', 'ntag21x_password', 'ntag21x_mirror_password', 'none', null]);
      // The password-protected tag rewritten plain (the protection lifted): the manifest follows the last write.
      await reader.present(tags[0]!);
      expect(await nfc.writeNode(orgId, slugs[1]!, {})).toMatchObject({ protected: false, protection: 'none' });
      reader.remove();
      expect(await manifest()).toEqual(['ntag21x_mirror', 'none', 'ntag21x_mirror_password', 'none', null]);
    });
  });
}
