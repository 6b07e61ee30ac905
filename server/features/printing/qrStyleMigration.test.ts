/**
 * Migration 086 (both backends): styles and logos set before it move from qr_styles into the
 * organization's settings row, read back the same, and enter the sync feed (so they reach the
 * remote or the sites); a creation of that row carries only the fields that are set.
 */
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../db/database.ts';
import { defaultMigrationsDir } from '../../db/migrate.ts';
import { PostgresStore, postgresMigrationsDir } from '../../db/postgresStore.ts';
import { SqliteStore } from '../../db/sqliteStore.ts';
import type { Store } from '../../db/store.ts';
import { freshPostgresDatabase } from '../../../test/support/stores.ts';
import { needs } from '../../../test/support/system.ts';
import { QrStyleRepo } from './qrStyleRepo.ts';

const opened: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const o of opened.splice(0).reverse()) await o.close();
});

/** A folder with the migrations before 086 only. */
function migrationsBefore086(from: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'waymark-before-086-'));
  opened.push({ close: () => rmSync(dir, { recursive: true, force: true }) });
  for (const f of readdirSync(from)) if (f < '086') copyFileSync(join(from, f), join(dir, f));
  return dir;
}

const AT = '2026-11-20T10:00:00.000Z';

/** Two organizations before 086: one with a style and a logo (and a scan domain), one with a style only. */
async function seed(store: Store): Promise<void> {
  await sql`INSERT INTO organizations (id, name, created_at) VALUES ('org-a', 'A', ${AT}), ('org-b', 'B', ${AT})`.execute(store.db);
  await sql`INSERT INTO organization_settings (id, org_id, scan_base, updated_at) VALUES ('org-a', 'org-a', 'https://scan.example.com', ${AT})`.execute(store.db);
  await sql`INSERT INTO qr_styles (org_id, fg, bg, module_style, logo, frame_text, logo_png, logo_width, logo_height, logo_uploaded_as, logo_updated_at, updated_at)
            VALUES ('org-a', '#1D3557', '#F1FAEE', 'dots', 1, 'Scan me', 'iVBORw0KGgo=', 64, 32, 'image/svg+xml', ${AT}, ${AT}),
                   ('org-b', '#000000', '#FFFF66', 'rounded', 0, NULL, NULL, NULL, NULL, NULL, NULL, ${AT})`.execute(store.db);
}

async function expectMoved(store: Store): Promise<void> {
  const repo = new QrStyleRepo();
  expect(await repo.get(store.db, 'org-a')).toEqual({
    style: { fg: '#1D3557', bg: '#F1FAEE', module_style: 'dots', logo: true, frame_text: 'Scan me', updated_at: AT },
    logo: { png: 'iVBORw0KGgo=', width: 64, height: 32, uploaded_as: 'image/svg+xml', updated_at: AT },
  });
  expect(await repo.get(store.db, 'org-b')).toEqual({
    style: { fg: '#000000', bg: '#FFFF66', module_style: 'rounded', logo: false, frame_text: null, updated_at: AT },
    logo: null,
  });
  const settings = await store.db.selectFrom('organization_settings').select(['id', 'scan_base']).orderBy('id').execute();
  expect(settings).toEqual([
    { id: 'org-a', scan_base: 'https://scan.example.com' },
    { id: 'org-b', scan_base: null },
  ]);
  // In the feed: org-a's style and logo as an edit of its row, org-b's row created with only what is set.
  const feed = await store.db.selectFrom('sync_outbox').select(['entity_id', 'fields']).where('entity', '=', 'organization').orderBy('seq').execute();
  const fieldsOf = (id: string) => feed.filter((r) => r.entity_id === id).map((r) => JSON.parse(r.fields) as Record<string, unknown>);
  expect(Object.keys(fieldsOf('org-a').at(-1)!).sort()).toEqual(['qr_logo_json', 'qr_style_json']);
  expect(Object.keys(fieldsOf('org-b').at(-1)!).sort()).toEqual(['qr_style_json', 'updated_at']);
}

describe('migration 086: the QR style moves into the synced organization settings', () => {
  it('on SQLite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'waymark-086-'));
    opened.push({ close: () => rmSync(dir, { recursive: true, force: true }) });
    const file = join(dir, 'waymark.db');
    const before = new SqliteStore(openDatabase(file, { migrationsDir: migrationsBefore086(defaultMigrationsDir) }));
    await seed(before);
    await before.close();
    const after = new SqliteStore(openDatabase(file));
    opened.push(after);
    await expectMoved(after);
  });

  const pgSkip = needs.postgres();
  it.skipIf(pgSkip !== null)(`on PostgreSQL${pgSkip ? ` (skipped: ${pgSkip})` : ''}`, async () => {
    const database = await freshPostgresDatabase();
    opened.push({ close: database.drop });
    const before = await PostgresStore.open(database.url, { migrationsDir: migrationsBefore086(postgresMigrationsDir), poolSize: 2 });
    await seed(before);
    await before.close();
    const after = await PostgresStore.open(database.url, { poolSize: 2 });
    opened.push(after);
    await expectMoved(after);
  });
});
