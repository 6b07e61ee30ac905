/**
 * max_scans decided on the exact count by every path that serves content (docs/scans.md "Node
 * limits"): once the limit's scans have been answered, HEAD, contact.vcf and the password form
 * refuse the content too, also at a process whose cache was read before those scans. On
 * PostgreSQL: two real `waymark serve` processes on one database, the scans served by one, the
 * other asked. On SQLite (one process per database file): the same process both times, whose
 * cache counts its own scans. Runs on both backends (vitest.config.ts onPostgresToo).
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { validPayloads } from '../support/fixtures.ts';
import { apiRequest, databaseFor, dropDatabaseFor, repoRoot, type ServerProcess, spawnServer, storageArgs, tempDataDir, testBackend } from '../support/server.ts';

const run = promisify(execFile);
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const PASSWORD = 'open sesame';

const dir = tempDataDir('waymark-limits-');
const processes: ServerProcess[] = [];
let key = '';
/** The process that serves the scans, and the one asked afterwards (the same one on SQLite). */
let serving: ServerProcess;
let asked: ServerProcess;

beforeAll(async () => {
  await databaseFor(dir);
  const { stdout } = await run(process.execPath, [join(repoRoot, 'server', 'cli.ts'), 'org', 'create', '--name', 'Limits', ...(await storageArgs(dir)), '--json']);
  key = (JSON.parse(stdout) as { api_key: string }).api_key;
  const env = { WAYMARK_NO_NFC: '1' };
  processes.push(await spawnServer(dir, [], env));
  if (testBackend === 'postgres') processes.push(await spawnServer(dir, [], env));
  serving = processes[0]!;
  asked = processes[processes.length - 1]!;
}, 180_000);
afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  await dropDatabaseFor(dir);
  rmSync(dir, { recursive: true, force: true });
});

/** A public request (a phone's User-Agent: a scan without one would be a bot's, never counted): status and body. */
async function hit(base: string, path: string, method = 'GET', form?: string): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = { 'user-agent': IPHONE, ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) };
  const res = await fetch(new URL(path, base), { method, headers, body: form, redirect: 'manual' });
  return { status: res.status, text: await res.text() };
}

async function create(body: Record<string, unknown>): Promise<string> {
  const res = await apiRequest(serving.url, 'POST', '/nodes', { label: 'Limited', ...body }, key);
  expect(res.status, res.text).toBe(201);
  return (res.body as { data: { slug: string } }).data.slug;
}

/** Both processes serve the node as created (PostgreSQL: within the cache's staleness bound); their caches now hold it. */
async function known(slug: string, status: number): Promise<void> {
  for (const p of processes) await vi.waitFor(async () => expect((await hit(p.url, `/v/${slug}`, 'HEAD')).status).toBe(status), { timeout: 30_000, interval: 100 });
}

describe(`max_scans on paths that record nothing (${testBackend === 'postgres' ? 'two processes on one PostgreSQL database' : 'SQLite'})`, () => {
  it('HEAD refuses once the limit is used up (on PostgreSQL at the process that did not serve the scans)', { timeout: 120_000 }, async () => {
    const slug = await create({ function_type: 'redirect', payload: validPayloads.redirect, max_scans: 2 });
    await known(slug, 302);
    for (let i = 0; i < 2; i++) expect((await hit(serving.url, `/v/${slug}`)).status, `scan ${i + 1}`).toBe(302);
    expect((await hit(asked.url, `/v/${slug}`, 'HEAD')).status).toBe(410);
    expect((await hit(asked.url, `/v/${slug}`)).status).toBe(410);
  });

  it('a gated vCard: the password form and contact.vcf, with the right password, refuse once a scan went past the limit', { timeout: 120_000 }, async () => {
    const slug = await create({ function_type: 'vcard', payload: validPayloads.vcard, max_scans: 2, password: PASSWORD });
    await known(slug, 200);
    const form = new URLSearchParams({ password: PASSWORD }).toString();
    // The first scan's visitor unlocks it (one scan counted, one left): the form is decided on the count too.
    expect((await hit(serving.url, `/v/${slug}`)).status).toBe(200);
    const unlocked = await hit(asked.url, `/v/${slug}`, 'POST', form);
    expect(unlocked.status).toBe(200);
    expect(unlocked.text).toContain('Lovelace');
    // The second and last counted scan, at the serving process: its visitor may still unlock it
    // (the form follows a counted scan), at the other process too.
    expect((await hit(serving.url, `/v/${slug}`)).status).toBe(200);
    const last = await hit(asked.url, `/v/${slug}`, 'POST', form);
    expect(last.status).toBe(200);
    expect(last.text).toContain('Lovelace');
    // A third scan is past the limit; the form and the file are refused everywhere after it.
    expect((await hit(serving.url, `/v/${slug}`)).status).toBe(410);
    for (const path of [`/v/${slug}`, `/v/${slug}/contact.vcf`]) {
      const late = await hit(asked.url, path, 'POST', form);
      expect(late.status, `POST ${path}`).toBe(410);
      expect(late.text).not.toContain('Lovelace');
      expect((await hit(asked.url, path, 'HEAD')).status, `HEAD ${path}`).toBe(410);
    }
    const file = await hit(asked.url, `/v/${slug}/contact.vcf`);
    expect(file.status).toBe(410);
    expect(file.text).not.toContain('Lovelace');
  });
});
