import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../server/db/database.ts';
import { defaultMigrationsDir } from '../../server/db/migrate.ts';
import { apiRequest, repoRoot, startTestServer, type TestServer } from '../support/server.ts';

const run = promisify(execFile);

/** docs/api.md, "Instance-admin keys": what only such a key may do, and which keys are such. */
describe('instance-admin keys', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  const as = (key: string) => (method: string, path: string, body?: unknown) => apiRequest(server.url, method, path, body, key);

  it('the key printed at the first start is one; a key made over the API, or of another organization, is not', async () => {
    const first = await server.api('GET', '/instance');
    expect(first.body.data.key.admin).toBe(true);
    expect(first.body.data.data_dir).toBe(server.dataDir);

    const made = await server.api('POST', '/api-keys', { name: 'Printer station' });
    expect(made.status).toBe(201);
    const tenant = await server.running.app.services.keys.createOrgWithKey('Tenant', 'First key');
    for (const key of [made.body.data.api_key as string, tenant.apiKey]) {
      const res = await as(key)('GET', '/instance');
      expect(res.status).toBe(200);
      expect(res.body.data.key.admin).toBe(false);
      expect(res.body.data).not.toHaveProperty('data_dir');
      expect(JSON.stringify(res.body)).not.toContain(server.dataDir);
    }
  });

  it('only an instance-admin key may pair the instance with a remote (403, nothing changes)', async () => {
    const made = (await server.api('POST', '/api-keys', { name: 'Not admin' })).body.data.api_key as string;
    const tenant = (await server.running.app.services.keys.createOrgWithKey('Tenant 2', 'First key')).apiKey;
    for (const key of [made, tenant]) {
      const res = await as(key)('POST', '/sync/pair', { remote: 'http://127.0.0.1:9', remote_key: 'wmk_x' });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ data: null, error: expect.stringMatching(/instance-admin key.*keys create --admin/) });
    }
    expect((await server.api('GET', '/sync/status')).body.data).toMatchObject({ mode: 'standalone', remote: null });
    // The admin key gets past the check (and on to the remote, which is not there: 422).
    const admin = await server.api('POST', '/sync/pair', { remote: 'http://127.0.0.1:9', remote_key: 'wmk_x' });
    expect(admin.status).toBe(422);
    expect(admin.body.details.remote).toMatch(/No Waymark instance answered/);
  });

  it('`keys create --admin` makes one for any organization; the desktop session key of the first organization is one', async () => {
    const tenant = await server.running.app.services.keys.createOrgWithKey('Tenant 3', 'First key');
    // Not spawnSync: the server under test runs in this process and must go on answering.
    const { stdout } = await run(process.execPath, [join(repoRoot, 'server', 'cli.ts'), 'keys', 'create', '--org', tenant.org.id, '--name', 'Ops', '--admin', '--data', server.dataDir, '--json']);
    const created = JSON.parse(stdout) as { key: { admin: boolean }; api_key: string };
    expect(created.key.admin).toBe(true);
    const instance = await as(created.api_key)('GET', '/instance');
    expect(instance.body.data).toMatchObject({ organization: { id: tenant.org.id }, key: { admin: true }, data_dir: server.dataDir });

    const session = await server.running.app.services.keys.startSessionKey('Desktop app session');
    expect((await as(session.apiKey)('GET', '/instance')).body.data.key.admin).toBe(true);
    const tenantSession = await server.running.app.services.keys.startSessionKey('Desktop app session', tenant.org.id);
    expect((await as(tenantSession.apiKey)('GET', '/instance')).body.data.key.admin).toBe(false);
  }, 60_000);
});

describe('migration 002 on an existing instance', () => {
  it('makes the oldest active key of the first organization the admin key, and no other', () => {
    const dir = mkdtempSync(join(tmpdir(), 'waymark-migrate-'));
    const before = join(dir, 'before');
    const file = join(dir, 'w.sqlite');
    try {
      // The schema as it was: only 001, with two organizations and their keys.
      mkdirSync(before);
      copyFileSync(join(defaultMigrationsDir, '001_core.sql'), join(before, '001_core.sql'));
      const old = openDatabase(file, { migrationsDir: before });
      old.exec(`
        INSERT INTO organizations (id, name, created_at) VALUES ('o1', 'First', '2026-01-01T00:00:00.000Z'), ('o2', 'Second', '2026-01-02T00:00:00.000Z');
        INSERT INTO api_keys (id, org_id, name, prefix, key_hash, plan, created_at, revoked_at) VALUES
          ('k0', 'o1', 'revoked', 'p', 'h0', 'developer', '2026-01-01T00:00:00.000Z', '2026-01-03T00:00:00.000Z'),
          ('k1', 'o1', 'first', 'p', 'h1', 'developer', '2026-01-01T00:00:01.000Z', NULL),
          ('k2', 'o1', 'later', 'p', 'h2', 'developer', '2026-01-05T00:00:00.000Z', NULL),
          ('k3', 'o2', 'other', 'p', 'h3', 'developer', '2025-12-01T00:00:00.000Z', NULL);`);
      old.close();
      const db = openDatabase(file);
      try {
        expect(db.prepare('SELECT id FROM api_keys WHERE admin = 1').pluck().all()).toEqual(['k1']);
      } finally {
        db.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
