/**
 * Replay protection across the processes of a PostgreSQL central instance: two real scan
 * processes (test/support/postgresScanProcess.ts) given the same tap proof key file, as
 * `waymark serve --tap-proof-keys` gives it. The same SUN URL sent to both at once: exactly one
 * accepts it as nfc_verified (the conditional UPDATE of the tag's counter), the other records it
 * as nfc_unverified.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PostgresStore } from '../../server/db/postgresStore.ts';
import { sunQueryFor } from '../../server/features/nfc/index.ts';
import { MasterKeys, NTAG424_KIND, TapProofService } from '../../server/features/tapproofs/index.ts';
import { systemClock } from '../../server/platform/clock.ts';
import { FileSecretStore } from '../../server/platform/secrets.ts';
import { repoRoot } from '../support/server.ts';
import { freshPostgresDatabase, postgresMissing } from '../support/stores.ts';
import { seedNode, seedOrg } from '../support/scanSeed.ts';

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const MASTER = Buffer.from('a3c94e0b7d2f6158e9b0c1d2e3f40516', 'hex');
const UID = Buffer.from('04C24EDA926980', 'hex');
const ROUNDS = 20;

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function spawnScanProcess(databaseUrl: string, keyFile: string): Promise<string> {
  const child = spawn(process.execPath, [join(repoRoot, 'test', 'support', 'postgresScanProcess.ts'), databaseUrl], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, TAP_PROOF_KEYS: keyFile },
  });
  let out = '';
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  cleanup.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`scan process exited with ${code}:\n${out}`)));
  });
  return `http://127.0.0.1:${port}`;
}

describe.skipIf(postgresMissing !== null)(`tap proofs on several processes${postgresMissing ? ` (skipped: ${postgresMissing})` : ''}`, () => {
  it('of two processes racing the same SUN URL, exactly one accepts it', { timeout: 180_000 }, async () => {
    const db = await freshPostgresDatabase();
    const store = await PostgresStore.open(db.url, { poolSize: 2 });
    const dir = mkdtempSync(join(tmpdir(), 'waymark-tapkeys-'));
    cleanup.push(async () => {
      await store.close();
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    });
    const org = await seedOrg(store);
    const nodeId = await seedNode(store, org, { slug: 'TAPTAP00', payload: { url: 'https://example.com/in' } });
    const keyFile = join(dir, 'tap-proof-keys.json');
    new MasterKeys(new FileSecretStore(keyFile)).import(NTAG424_KIND, org, 1, MASTER);
    await new TapProofService({ store, clock: systemClock, kinds: [] }).registerTag(store.db, { org_id: org, node_id: nodeId, kind: NTAG424_KIND, uid: UID.toString('hex'), key_version: 1 });

    const [a, b] = await Promise.all([spawnScanProcess(db.url, keyFile), spawnScanProcess(db.url, keyFile)]);
    for (let counter = 1; counter <= ROUNDS; counter++) {
      const q = sunQueryFor(MASTER, { uid: UID, readCounter: counter });
      const path = `/v/TAPTAP00?picc=${q.picc}&cmac=${q.cmac}`;
      const answers = await Promise.all([a, b].map((base) => fetch(`${base}${path}`, { redirect: 'manual', headers: { 'user-agent': IPHONE } })));
      expect(answers.map((r) => r.status)).toEqual([302, 302]);
    }
    const bySource = await store.db
      .selectFrom('scan_events')
      .select(['source', (eb) => eb.fn.countAll<number>().as('n')])
      .where('node_id', '=', nodeId)
      .groupBy('source')
      .orderBy('source')
      .execute();
    expect(bySource.map((r) => [r.source, Number(r.n)])).toEqual([
      ['nfc_unverified', ROUNDS],
      ['nfc_verified', ROUNDS],
    ]);
    const tag = await store.db.selectFrom('tap_proof_tags').select('last_counter').where('node_id', '=', nodeId).executeTakeFirstOrThrow();
    expect(tag.last_counter).toBe(ROUNDS);
  });
});
