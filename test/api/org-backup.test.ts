/**
 * `waymark export --org` and `waymark import --org` (docs/backup.md), as real CLI processes on the
 * data of a real server process, on SQLite and on PostgreSQL: an organization with templates, a
 * batch, nodes with limits and a password, rules and a webhook goes to another instance and comes
 * back out the same; a bad document, or one whose slugs the instance has, changes nothing.
 */
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/receiver.ts';
import { apiRequest, databaseFor, dropDatabaseFor, repoRoot, type ServerProcess, spawnServer, storageArgs, tempDataDir } from '../support/server.ts';
import { needs } from '../support/system.ts';
import { readDb } from '../sync/support.ts';

const CLI = join(repoRoot, 'server', 'cli.ts');

/** One CLI command on an instance's storage (`--data` or `--database`), as an operator runs it. */
async function cli(dataDir: string, args: string[], stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const res = spawnSync(process.execPath, [CLI, ...args, ...(await storageArgs(dataDir))], { input: stdin ?? '', maxBuffer: 64 * 1024 * 1024 });
  return { code: res.status, stdout: res.stdout.toString(), stderr: res.stderr.toString() };
}

async function cliOk(dataDir: string, args: string[], stdin?: string): Promise<string> {
  const res = await cli(dataDir, args, stdin);
  expect(res.code, res.stderr).toBe(0);
  return res.stdout;
}

type Doc = Record<string, unknown> & { nodes: Array<Record<string, unknown>>; webhooks: Array<Record<string, unknown>> };

/** The document but for what an export to another organization must change. */
function sameParts(doc: Doc): Record<string, unknown> {
  const { exported_at: _at, organization: _org, ...rest } = doc;
  return rest;
}

/** Rows of an organization behind the API, counted on the instance's storage. */
async function counts(dataDir: string, orgId: string): Promise<Record<string, number>> {
  return readDb(dataDir, async (db) => {
    const n = async (sql: string) => Number(await db.value<number>(sql, orgId));
    return {
      nodes: await n('SELECT COUNT(*) AS n FROM nodes WHERE org_id = ?'),
      templates: await n('SELECT COUNT(*) AS n FROM templates WHERE org_id = ?'),
      batches: await n('SELECT COUNT(*) AS n FROM batches WHERE org_id = ?'),
      webhooks: await n('SELECT COUNT(*) AS n FROM webhooks WHERE org_id = ?'),
      rules: await n('SELECT COUNT(*) AS n FROM rules WHERE node_id IN (SELECT id FROM nodes WHERE org_id = ?)'),
      events: await n('SELECT COUNT(*) AS n FROM outbox_events WHERE org_id = ?'),
    };
  });
}

describe.each(['sqlite', 'postgres'] as const)('waymark export --org / import --org on %s', (backend) => {
  const dirs: string[] = [];
  const procs: ServerProcess[] = [];
  const dir = async () => {
    const d = tempDataDir('waymark-backup-');
    dirs.push(d);
    if (backend === 'postgres') await databaseFor(d, 'postgres');
    return d;
  };
  afterAll(async () => {
    for (const p of procs) await p.stop();
    for (const d of dirs) {
      await dropDatabaseFor(d);
      rmSync(d, { recursive: true, force: true });
    }
  });

  // Each CLI command is a Node process of its own: minutes, not seconds, on a loaded 2-core machine.
  it('round trip: export, import into an empty organization on another instance, export again gives the same document', { timeout: 300_000 }, async ({ skip }) => {
    const missing = backend === 'postgres' ? needs.postgres() : null;
    if (missing) skip(missing);
    const source = await dir();
    const server = await spawnServer(source, [], {}, { backend });
    procs.push(server);
    const key = await eventually(() => /^\s+(wmk_[A-Za-z0-9]+)\s*$/m.exec(server.output())?.[1], 30_000, 'the first-run key', 20);
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await apiRequest(server.url, method, `/v1${path}`, body, key);
      expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
      return res.body.data;
    };
    const template = await api('POST', '/templates', { name: 'Menu', function_type: 'redirect', payload: { url: 'https://example.com/menu' }, locked_fields: ['url'] });
    const batch = await api('POST', '/batches', { label: 'Fair', prefix: 'FAIR-', quantity: 3, function_type: 'redirect' });
    await eventually(async () => ((await api('GET', `/batches/${batch.id}`)).status === 'ready' ? true : undefined), 30_000, 'the batch ready');
    const gated = await api('POST', '/nodes', {
      label: 'Gated',
      function_type: 'redirect',
      payload: { url: 'https://example.com/secret' },
      expires_at: '2030-01-01T00:00:00+01:00',
      max_scans: 50,
      password: 'open sesame',
      after_limit: { type: 'redirect', url: 'https://example.com/sold-out' },
    });
    await api('POST', '/nodes', { label: 'From template', function_type: 'redirect', payload: {}, template_id: template.id });
    await api('POST', `/nodes/${gated.slug}/rules`, { rule_type: 'geo_based', conditions: { countries: ['FR'] }, function_type: 'redirect', payload: { url: 'https://example.fr' } });
    await api('POST', `/nodes/${gated.slug}/rules`, { rule_type: 'traffic_split', conditions: { weight: 30 }, function_type: 'redirect', payload: { url: 'https://example.com/b' }, priority: 2 });
    await api('POST', '/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['node.created', 'node.updated'], description: 'CRM' });
    const orgId = JSON.parse(await cliOk(source, ['org', 'list', '--json'])).orgs[0].id as string;

    const exported = await cliOk(source, ['export', '--org', orgId]);
    const first = JSON.parse(exported) as Doc;
    expect(first).toMatchObject({ format: 'waymark.organization', version: 1, organization: { id: orgId } });
    expect(first.nodes).toHaveLength(5);
    const gatedOut = first.nodes.find((n) => n.slug === gated.slug)!;
    expect(gatedOut).toMatchObject({ expires_at: '2029-12-31T23:00:00.000Z', max_scans: 50, after_limit: { type: 'redirect', url: 'https://example.com/sold-out' } });
    expect(gatedOut.password_hash).toMatch(/^scrypt\$/);
    expect(gatedOut.rules).toHaveLength(2);
    expect(exported).not.toContain('open sesame');
    expect(first.webhooks).toHaveLength(1);
    expect(first.webhooks[0]).not.toHaveProperty('secret');
    expect(exported).not.toMatch(/whsec_/);

    // Another instance, an empty organization: the document from a file, then the same from stdin is refused (not empty any more).
    const target = await dir();
    const restored = JSON.parse(await cliOk(target, ['org', 'create', '--name', 'Restored', '--json'])).org as { id: string };
    const file = join(target, 'org.json');
    writeFileSync(file, exported);
    const report = JSON.parse(await cliOk(target, ['import', '--org', restored.id, '--file', file, '--json']));
    expect(report).toMatchObject({ templates: 1, batches: 1, nodes: 5, rules: 2 });
    expect(report.webhooks).toEqual([{ id: first.webhooks[0]!.id, url: 'http://127.0.0.1:9/hook', secret: expect.stringMatching(/^whsec_/) }]);
    expect((await counts(target, restored.id)).events).toBe(5); // node.created, one per node
    const again = await cli(target, ['import', '--org', restored.id], exported);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/is not empty/);

    // Into another organization of the same instance: its ids (and slugs) are there already.
    const twin = JSON.parse(await cliOk(target, ['org', 'create', '--name', 'Twin', '--json'])).org as { id: string };
    const twice = await cli(target, ['import', '--org', twin.id, '--file', file]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/^waymark: nothing was imported: templates\.0: /);
    expect(await counts(target, twin.id)).toEqual({ nodes: 0, templates: 0, batches: 0, webhooks: 0, rules: 0, events: 0 });

    const second = JSON.parse(await cliOk(target, ['export', '--org', 'Restored'])) as Doc;
    expect(second.organization).toEqual({ id: restored.id, name: 'Restored' });
    expect(sameParts(second)).toEqual(sameParts(first));

    // The imported password is the same password: the target's scan page accepts it.
    const targetServer = await spawnServer(target, [], {}, { backend });
    procs.push(targetServer);
    const wrong = await fetch(`${targetServer.url}/v/${gated.slug}`, { method: 'POST', body: 'password=nope', headers: { 'content-type': 'application/x-www-form-urlencoded' }, redirect: 'manual' });
    expect(wrong.status).not.toBe(302);
    const right = await fetch(`${targetServer.url}/v/${gated.slug}`, { method: 'POST', body: 'password=open+sesame', headers: { 'content-type': 'application/x-www-form-urlencoded' }, redirect: 'manual' });
    expect(right.status).toBe(302);
    // The content behind the password: the node's own, or the 30 % split variant for this visitor.
    expect(['https://example.com/secret', 'https://example.com/b']).toContain(right.headers.get('location'));
  });

  it('a bad document, another version or slugs the instance has change nothing', { timeout: 300_000 }, async ({ skip }) => {
    const missing = backend === 'postgres' ? needs.postgres() : null;
    if (missing) skip(missing);
    const source = await dir();
    const orgId = JSON.parse(await cliOk(source, ['org', 'create', '--name', 'Source', '--json'])).org.id as string;
    const server = await spawnServer(source, [], {}, { backend });
    procs.push(server);
    const key = JSON.parse(await cliOk(source, ['keys', 'create', '--org', orgId, '--name', 'test', '--json'])).api_key as string;
    for (let i = 0; i < 3; i++) {
      const res = await apiRequest(server.url, 'POST', '/v1/nodes', { label: `Door ${i}`, function_type: 'redirect', payload: { url: `https://example.com/${i}` } }, key);
      expect(res.status, res.text).toBe(201);
    }
    const doc = JSON.parse(await cliOk(source, ['export', '--org', orgId])) as Doc;

    const target = await dir();
    const empty = JSON.parse(await cliOk(target, ['org', 'create', '--name', 'Empty', '--json'])).org.id as string;
    const before = await counts(target, empty);
    // Valid by the document's schema; the last node's rule is refused by the rules feature, after the nodes were written.
    const lateFailure = structuredClone(doc);
    lateFailure.nodes[2]!.rules = [{ id: 'r1', rule_type: 'geo_based', conditions: { countries: ['nowhere'] }, function_type: 'redirect', payload: { url: 'https://e.x' }, priority: 0, enabled: true, created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' }];
    const late = await cli(target, ['import', '--org', empty], JSON.stringify(lateFailure));
    expect(late.code).toBe(2);
    expect(late.stderr).toMatch(/nothing was imported/);
    expect(late.stderr).toMatch(/nodes\.2\.rules\.0\.conditions\.countries/);
    const badPayload = structuredClone(doc);
    badPayload.nodes[1]!.payload = { url: 'ftp://x' };
    const bad = await cli(target, ['import', '--org', empty], JSON.stringify(badPayload));
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/nodes\.1\.payload\.url/);
    const newer = await cli(target, ['import', '--org', empty], JSON.stringify({ ...doc, version: 2 }));
    expect(newer.code).toBe(2);
    expect(newer.stderr).toMatch(/version: is 2: this Waymark reads version 1/);
    const notOurs = await cli(target, ['import', '--org', empty], '{"nodes": []}');
    expect(notOurs.stderr).toMatch(/format/);
    expect(await counts(target, empty)).toEqual(before);

    // The same document twice on one instance: the second organization cannot have the slugs.
    await cliOk(target, ['import', '--org', empty], JSON.stringify(doc));
    const twin = JSON.parse(await cliOk(target, ['org', 'create', '--name', 'Twin', '--json'])).org.id as string;
    const twice = await cli(target, ['import', '--org', twin], JSON.stringify(doc));
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(new RegExp(`nodes\\.0\\.slug: ${doc.nodes[0]!.slug} is already used on this instance`));
    expect(await counts(target, twin)).toEqual({ nodes: 0, templates: 0, batches: 0, webhooks: 0, rules: 0, events: 0 });
  });
});
