import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { COPY_ORDER } from '../../server/db/copyToPostgres.ts';
import { createNode, validPayloads, waitForBatch } from '../support/fixtures.ts';
import { FileSecretStore } from '../../server/platform/secrets.ts';
import { startServer } from '../../server/serve.ts';
import { repoRoot, startTestServer, tempDataDir } from '../support/server.ts';
import { freshPostgresDatabase } from '../support/stores.ts';
import { needs } from '../support/system.ts';

const postgresMissing = needs.postgres();

const CLI = join(repoRoot, 'server', 'cli.ts');

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('WAYMARK_')));
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: clean, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Every row of every table, columns sorted, values as text: equal on both sides if nothing was lost. */
type Dump = Record<string, string[]>;

const normal = (v: unknown) => (v === null || v === undefined ? null : typeof v === 'number' || typeof v === 'bigint' ? String(v) : String(v));

function dumpSqlite(file: string): Dump {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const out: Dump = {};
    for (const table of COPY_ORDER) {
      const rows = db.prepare(`SELECT * FROM ${table}`).all() as Array<Record<string, unknown>>;
      out[table] = rows.map((r) => JSON.stringify(Object.keys(r).sort().map((k) => [k, normal(r[k])]))).sort();
    }
    return out;
  } finally {
    db.close();
  }
}

async function dumpPostgres(url: string): Promise<Dump> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const out: Dump = {};
    for (const table of COPY_ORDER) {
      const { rows } = await client.query<Record<string, unknown>>(`SELECT * FROM ${table}`);
      out[table] = rows.map((r) => {
        delete r.rowid; // SQLite's rowid is implicit and not in SELECT *; compared below
        // PostgreSQL's fold watermark (migration 064) has no SQLite counterpart: the copy gives
        // every scan and the state row its own transaction id, checked below.
        if (table === 'scan_events') delete r.xid;
        if (table === 'scan_rollup_state') delete r.last_xid;
        return JSON.stringify(Object.keys(r).sort().map((k) => [k, normal(r[k])]));
      }).sort();
    }
    return out;
  } finally {
    await client.end();
  }
}

describe.skipIf(postgresMissing !== null)(`waymark migrate --from-data --database${postgresMissing ? ` (skipped: ${postgresMissing})` : ''}`, () => {
  const drops: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const drop of drops) await drop();
  });

  it('copies a populated instance row for row, refuses a second run into the same database, and keeps ids going', async () => {
    const dataDir = tempDataDir('waymark-migrate-');
    drops.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    let webhook: { id: string; secret: string; orgId: string } | undefined;
    const server = await startTestServer({ limits: 'unlimited', dataDir });
    try {
      const redirect = await createNode(server, 'redirect');
      await createNode(server, 'wifi');
      const gone = await createNode(server, 'vcard');
      expect((await server.api('POST', `/nodes/${redirect.slug}/rules`, { rule_type: 'geo_based', conditions: { countries: ['FR'] }, function_type: 'redirect', payload: validPayloads.redirect })).status).toBe(201);
      expect((await server.api('POST', '/templates', { name: 'T', function_type: 'redirect', payload: validPayloads.redirect, locked_fields: ['url'] })).status).toBe(201);
      const batch = (await server.api('POST', '/batches', { label: 'B', prefix: 'MIG', quantity: 5, function_type: 'redirect', base_payload: validPayloads.redirect })).body.data;
      await waitForBatch(server, batch.id);
      expect((await server.api('DELETE', `/nodes/${gone.slug}`)).status).toBe(200); // a tombstoned slug
      for (let i = 0; i < 3; i++) await fetch(`${server.url}/v/${redirect.slug}`, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148' } });
      const hook = await server.api('POST', '/webhooks', { url: 'https://hooks.example.com/w', events: ['node.created'] });
      expect(hook.status).toBe(201);
      webhook = { id: hook.body.data.id as string, secret: hook.body.data.secret as string, orgId: server.orgId };
    } finally {
      await server.close();
    }

    const database = await freshPostgresDatabase();
    drops.push(database.drop);
    const first = await run(['migrate', '--from-data', dataDir, '--database', database.url, '--json']);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const report = JSON.parse(first.stdout) as { rows: number; tables: Array<{ table: string; rows: number }>; secrets: { copied: number; rootKeyAdded: boolean } };
    // The data directory's own secrets file is the one the servers are given by default: it gains a root key.
    expect(report.secrets).toEqual({ copied: 0, rootKeyAdded: true });
    expect(report.tables.find((t) => t.table === 'nodes')!.rows).toBe(2 + 5);
    expect(report.tables.find((t) => t.table === 'slugs')!.rows).toBe(3 + 5); // the deleted node's slug stays a tombstone

    const sqlite = dumpSqlite(join(dataDir, 'waymark.sqlite'));
    const postgres = await dumpPostgres(database.url);
    for (const table of COPY_ORDER) expect(postgres[table], table).toEqual(sqlite[table]);

    // Insertion order (SQLite's rowid) survives as PostgreSQL's rowid column.
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const pgOrder = (await client.query<{ id: string }>('SELECT id FROM nodes ORDER BY rowid')).rows.map((r) => r.id);
      const lite = new BetterSqlite3(join(dataDir, 'waymark.sqlite'), { readonly: true });
      const liteOrder = (lite.prepare('SELECT id FROM nodes ORDER BY rowid').pluck().all() as string[]);
      lite.close();
      expect(pgOrder).toEqual(liteOrder);
      // The copied scans and the fold's watermark share the copy's transaction id, so scans not
      // folded on SQLite (id above last_event) are exactly the ones PostgreSQL will fold.
      const xids = await client.query<{ xid: string }>('SELECT DISTINCT xid::text AS xid FROM scan_events UNION SELECT last_xid::text FROM scan_rollup_state');
      expect(xids.rows).toHaveLength(1);
      // Identity sequences continue after the copied ids: a new outbox event gets the next seq.
      const max = Number((await client.query<{ m: string }>('SELECT MAX(seq) AS m FROM outbox_events')).rows[0]!.m);
      const next = await client.query<{ seq: string }>(
        "INSERT INTO outbox_events (id, org_id, type, data_json, created_at) VALUES ('evt_after', 'o', 't', '{}', 'now') RETURNING seq",
      );
      expect(Number(next.rows[0]!.seq)).toBe(max + 1);
      // Change capture continues the copied feed: the next captured change comes after every
      // copied one, in seq and in HLC (migration 050, waymark_sync_resume).
      const feed = (await client.query<{ seq: string; hlc: string }>('SELECT MAX(seq) AS seq, MAX(hlc) AS hlc FROM sync_outbox')).rows[0]!;
      await client.query("UPDATE nodes SET label = label || ' (moved)' WHERE id = (SELECT id FROM nodes ORDER BY rowid LIMIT 1)");
      const captured = (await client.query<{ seq: string; hlc: string }>('SELECT seq, hlc FROM sync_outbox ORDER BY seq DESC LIMIT 1')).rows[0]!;
      expect(Number(captured.seq)).toBe(Number(feed.seq) + 1);
      expect(captured.hlc > feed.hlc).toBe(true);
    } finally {
      await client.end();
    }

    const again = await run(['migrate', '--from-data', dataDir, '--database', database.url]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already holds data/);

    // A server on the database opens the webhook secret sealed on SQLite (the data key stored before
    // the root key existed wins over a derived one), with the secrets file given to every process.
    const shared = join(tempDataDir('waymark-migrate-secrets-'), 'shared.json');
    drops.push(async () => rmSync(join(shared, '..'), { recursive: true, force: true }));
    const into = await freshPostgresDatabase();
    drops.push(into.drop);
    const elsewhere = JSON.parse((await run(['migrate', '--from-data', dataDir, '--database', into.url, '--secrets', shared, '--json'])).stdout) as typeof report;
    expect(elsewhere.secrets.rootKeyAdded).toBe(false); // the data directory's root key came along
    expect(elsewhere.secrets.copied).toBeGreaterThanOrEqual(2);
    const otherDir = tempDataDir('waymark-migrate-other-');
    drops.push(async () => rmSync(otherDir, { recursive: true, force: true }));
    const running = await startServer({ host: '127.0.0.1', port: 0, dataDir: otherDir, database: into.url, secrets: new FileSecretStore(shared), logger: { info: () => {}, error: () => {} } });
    try {
      expect((await running.app.services.webhooks.get(webhook!.orgId, webhook!.id)).secret).toBe(webhook!.secret);
    } finally {
      await running.close();
    }
  });

  it('says what is wrong with a missing data directory or a bad URL, in one line', async () => {
    const missing = await run(['migrate', '--from-data', '/nonexistent/waymark', '--database', 'postgres://127.0.0.1:1/x']);
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    expect(missing.stderr).toMatch(/no Waymark data/);
    const bad = await run(['migrate', '--from-data', '/tmp', '--database', 'mysql://x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/postgres:\/\//);
  });
});
