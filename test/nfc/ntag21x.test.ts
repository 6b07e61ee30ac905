// NTAG213/215/216 tap evidence and passwords on the real stack (pcscd + vpcd + the virtual Type 2
// tag with its mirror, NFC counter and PWD_AUTH): a batch session mirrors and protects its tags,
// phone taps of a tag scan as counted evidence, a replayed URL is refused under the node's
// 'refuse' policy, and a tag protected by someone else is refused with the reason.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeUriMessage } from '../../server/features/nfc/ndef.ts';
import { MIRROR_PLACEHOLDER } from '../../server/features/nfc/ntag21x.ts';
import { TagPasswords } from '../../server/features/nfc/tagPasswords.ts';
import { InstanceKeys } from '../../server/platform/instanceKeys.ts';
import { FileSecretStore } from '../../server/platform/secrets.ts';
import type { RunningServer } from '../../server/serve.ts';
import { rows } from '../support/rows.ts';
import { repoRoot } from '../support/server.ts';
import { nfcSkipReason, type PcscSandbox } from './harness.ts';
import { manifest, type NfcTestServer, openEvents, readyBatch, startNfcTestServer, until, type Api } from './support.ts';
import { VirtualTag } from './virtual-tag.ts';

const skip = nfcSkipReason();
/** A phone's browser: scans from bots are not counted in analytics. */
const PHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';

describe.skipIf(skip !== null)('NTAG21x mirror and password (pcscd + vpcd + virtual tags)', () => {
  let nfc: NfcTestServer;
  let sandbox: PcscSandbox;
  let server: RunningServer;
  let apiKey: string;
  let api: Api;
  let base: string;

  beforeAll(async () => {
    nfc = await startNfcTestServer('waymark-nfc-ntag21x-');
    ({ sandbox, server, apiKey, api } = nfc);
    base = server.url;
  });

  afterAll(async () => {
    await nfc?.close();
  });

  async function lift(tag: VirtualTag): Promise<void> {
    await tag.remove();
    await until('card gone', async () => (await api('GET', '/nfc/status')).body.data.reader.cards.length === 0);
  }

  /** A phone taps the tag and opens the URL it read (on this server instead of the scan domain). */
  async function scanTap(url: string): Promise<{ status: number; body: string }> {
    const r = await fetch(url.replace('https://wm.example', base), { redirect: 'manual', headers: { 'user-agent': PHONE } });
    return { status: r.status, body: await r.text() };
  }

  it('a session mirrors and protects each tag; taps are accepted with increasing counters, a replay is refused', async () => {
    const batch = await readyBatch(api, 'MIR', 2);
    const stream = openEvents(base, apiKey);
    await stream.ready;
    const started = await api('POST', '/nfc/session', { batch_id: batch.id, mirror: true, protect: true });
    expect(started.status).toBe(201);
    expect(started.body.data).toMatchObject({ mirror_tags: true, protect_tags: true });
    const tags = [new VirtualTag({ model: 'NTAG213' }), new VirtualTag({ model: 'NTAG215' })];
    for (const tag of tags) {
      await tag.insert(sandbox.endpoint(0));
      const e = await stream.next((x) => x.type === 'tag.written' || x.type === 'tag.refused');
      expect(e.type).toBe('tag.written');
      expect(e.data).toMatchObject({ mirror: true, protected: true });
      await lift(tag);
    }
    stream.close();
    const { nodes } = await manifest(api, batch.id);
    const [row] = nodes;
    // The tag memory holds the placeholder; every read shows the UID and counter over it.
    expect(decodeUriMessage(tags[0]!.ndefMessage()!)).toBe(`${row!.url}?nfc&m=${MIRROR_PLACEHOLDER}`);

    const taps: string[] = [];
    for (let i = 0; i < 3; i++) {
      const url = decodeUriMessage(tags[0]!.phoneTap()!)!;
      taps.push(url);
      const r = await scanTap(url);
      expect(r.status).toBe(302); // served as usual
    }
    const counters = taps.map((u) => parseInt(new URL(u).searchParams.get('m')!.slice(15), 16));
    expect(counters).toEqual([counters[0]!, counters[0]! + 1, counters[0]! + 2]);
    const node = await server.app.services.nodes.get(server.firstRun!.orgId, row!.slug);
    const [registered] = await server.app.services.tapProofs.tagsOfNode(node.id);
    expect(registered).toMatchObject({ kind: 'ntag21x', uid: tags[0]!.uid.toString('hex').toUpperCase(), last_counter: counters[2] });

    // Under 'refuse', a replayed URL gets the "could not be verified" page; a fresh tap still opens.
    await server.app.services.tapProofs.setPolicy(server.firstRun!.orgId, node.id, 'refuse');
    const replay = await scanTap(taps[1]!);
    expect(replay.status).not.toBe(302);
    expect(replay.body).toContain('This tag could not be verified');
    expect((await scanTap(decodeUriMessage(tags[0]!.phoneTap()!)!)).status).toBe(302);
    // Another tag's URL edited to this node: refused too.
    const other = new URL(decodeUriMessage(tags[1]!.phoneTap()!)!);
    expect((await scanTap(`${row!.url}?nfc&m=${other.searchParams.get('m')}`)).body).toContain('This tag could not be verified');
    // An edited counter below the last, a UID no one registered, the bare placeholder: refused.
    const m = new URL(taps[2]!).searchParams.get('m')!;
    const refused = 'This tag could not be verified';
    expect((await scanTap(`${row!.url}?nfc&m=${m.slice(0, 15)}${counters[0]!.toString(16).toUpperCase().padStart(6, '0')}`)).body).toContain(refused);
    expect((await scanTap(`${row!.url}?nfc&m=04112233445566x${m.slice(15)}`)).body).toContain(refused);
    expect((await scanTap(`${row!.url}?nfc&m=${MIRROR_PLACEHOLDER}`)).body).toContain(refused);
    // A counter edited upwards passes: the mirror is evidence, not proof (docs/nfc.md).
    expect((await scanTap(`${row!.url}?nfc&m=${m.slice(0, 15)}FFFFF0`)).status).toBe(302);
    // Consistent mirrors were recorded as tag scans, never as verified ones.
    const bySource = await until('scans counted', async () => {
      const analytics = (await api('GET', `/nodes/${row!.slug}/analytics`)).body.data;
      const counts: Record<string, number> = Object.fromEntries((analytics.breakdowns.source as { value: string; scans: number }[]).map((b) => [b.value, b.scans]));
      return (counts.nfc_unverified ?? 0) >= 10 ? counts : null;
    });
    expect(bySource).toEqual({ nfc_unverified: 10 }); // 3 taps, the fresh tap, the forged counter and 5 refused URLs

    // The protected tag: rewriting it for another node authenticates with its password first.
    await tags[0]!.insert(sandbox.endpoint(0));
    await until('tag seen', async () => (await api('GET', '/nfc/status')).body.data.reader.cards.length === 1);
    // Check mode shows its protection: the mirror with its own UID and counter, our password.
    const checked = (await until('tag read', async () => (await api('GET', '/nfc/tag')).body.data)).protection;
    expect(checked).toMatchObject({ kind: 'ntag21x', mirror: true, verifies: true, password: true, key_version: null, counter: expect.any(Number) });
    expect(checked.message).toMatch(/UID \+ counter mirror on .*password-protected with this organization’s password/);
    const rewritten = await api('POST', '/nfc/write', { slug: nodes[1]!.slug, reassign: true, protect: true, mirror: true });
    expect(rewritten.status).toBe(200);
    expect(rewritten.body.data).toMatchObject({ protected: true, mirror: true, reassigned_from: row!.slug });
    expect(tags[0]!.failedAuths).toEqual([]);
    await lift(tags[0]!);
  });

  it('after tap-keys rotate --kind ntag21x, a rewrite authenticates with the version the tag was protected with and moves it to the new one', async () => {
    const batch = await readyBatch(api, 'ROT', 1);
    const [row] = (await manifest(api, batch.id)).nodes;
    const tag = new VirtualTag({ model: 'NTAG213' });
    const pwdOnTag = () => tag.memory.subarray(0x2b * 4, 0x2b * 4 + 4).toString('hex'); // NTAG213: PWD at page 2Bh
    const passwords = new TagPasswords(new InstanceKeys(new FileSecretStore(join(nfc.dataDir, 'secrets.json')), null));
    const passwordVersions = async () =>
      (await rows<{ password_version: number | null }>(server.store, 'SELECT password_version FROM nfc_writes WHERE uid = ? ORDER BY seq', uidOf(tag))).map((r) => r.password_version);
    await tag.insert(sandbox.endpoint(0));
    await until('tag seen', async () => (await api('GET', '/nfc/status')).body.data.reader.cards.length === 1);
    expect((await api('POST', '/nfc/write', { slug: row!.slug, protect: true })).body.data).toMatchObject({ protected: true });
    const v1 = passwords.currentVersion(nfc.orgId)!;
    expect(pwdOnTag()).toBe(passwords.passwordFor(nfc.orgId, uidOf(tag), { version: v1 })!.pwd);

    // Not execFileSync: the in-process server (and its bridge watchdog) must keep running meanwhile.
    const { stdout: out } = await promisify(execFile)(process.execPath, [join(repoRoot, 'server', 'cli.ts'), 'tap-keys', 'rotate', '--kind', 'ntag21x', '--org', nfc.orgId, '--data', nfc.dataDir], { encoding: 'utf8' });
    expect(out).toMatch(new RegExp(`NTAG21x password master key version ${v1 + 1} is now current`));
    const v2 = passwords.passwordFor(nfc.orgId, uidOf(tag))!;
    expect(v2.version).toBe(v1 + 1);
    expect(v2.pwd).not.toBe(pwdOnTag());

    // Rewritten: PWD_AUTH with its v1 password (no failed attempt), then protected with v2's.
    for (const expected of [v2.pwd, v2.pwd]) {
      const r = await api('POST', '/nfc/write', { slug: row!.slug, protect: true });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.data).toMatchObject({ protected: true });
      expect(pwdOnTag()).toBe(expected);
    }
    expect(tag.failedAuths).toEqual([]);
    expect(await passwordVersions()).toEqual([v1, v2.version, v2.version]);
    await lift(tag);
  });

  it('refuses a tag protected with another password, saying why, and writes nothing', async () => {
    const batch = await readyBatch(api, 'FOR', 1);
    const [row] = (await manifest(api, batch.id)).nodes;
    const foreign = new VirtualTag();
    foreign.memory.write('1122334455660000', 0x2b * 4, 'hex'); // PWD 11223344, PACK 5566
    foreign.memory[0x29 * 4 + 3] = 0x04; // AUTH0: user memory protected
    await foreign.insert(sandbox.endpoint(0));
    await until('tag seen', async () => (await api('GET', '/nfc/status')).body.data.reader.cards.length === 1);
    const writes = foreign.stats.writes;
    for (const body of [{ slug: row!.slug }, { slug: row!.slug, protect: true }]) {
      const r = await api('POST', '/nfc/write', body);
      expect(r.status).toBe(409);
      expect(r.body.error).toMatch(/password-protected by someone else/);
    }
    expect(foreign.stats.writes).toBe(writes);
    await lift(foreign);
  });
});

function uidOf(tag: VirtualTag): string {
  return [...tag.uid].map((b) => b.toString(16).toUpperCase().padStart(2, '0')).join(':');
}
