import { randomBytes } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import { Hlc } from '../platform/hlc.ts';

/**
 * State behind the SQL functions the change-capture triggers call (migration 055). Registered on
 * every connection opened by openDatabase, so any code path writing a synced table works; the
 * sync feature then points the clock at the injected one and sets the writer id.
 */
export interface CaptureState {
  hlc: Hlc;
  /** The local writer id (site_id/incarnation). */
  writer: string;
  /** While applying a remote change: its origin writer and HLC (recorded instead of local ones). */
  applying: { writer: string; hlc: string } | null;
  /** The clock behind the HLC (the app's injected clock once createSync ran). */
  now: () => number;
  /** The sync group of the open store transaction (sqliteStore.ts sets it); null outside one. */
  group: string | null;
}

const states = new WeakMap<Database, CaptureState>();

export function captureState(db: Database): CaptureState {
  const state = states.get(db);
  if (!state) throw new Error('Change capture is not registered on this connection (open it with openDatabase)');
  return state;
}

export function registerCapture(db: Database): CaptureState {
  const state: CaptureState = { hlc: undefined as unknown as Hlc, writer: UNPAIRED_WRITER, applying: null, now: () => Date.now(), group: null };
  state.hlc = new Hlc(() => state.now());
  states.set(db, state);
  let group: string | null = null;
  db.function('waymark_hlc', { deterministic: false }, () => state.applying?.hlc ?? state.hlc.send());
  db.function('waymark_writer', { deterministic: false }, () => state.applying?.writer ?? state.writer);
  db.function('waymark_sync_applying', { deterministic: false }, () => (state.applying ? 1 : 0));
  // A store transaction names its group (sqliteStore.ts). A synchronous better-sqlite3
  // transaction runs within one microtask: every row written before the next one belongs to the
  // same transaction (or to one right after it, which is harmless: a group only has to travel whole).
  db.function('waymark_group', { deterministic: false }, () => {
    if (state.group !== null) return state.group;
    if (group === null) {
      group = randomBytes(8).toString('hex');
      queueMicrotask(() => {
        group = null;
      });
    }
    return group;
  });
  db.function('waymark_diff', { deterministic: true }, (before: unknown, after: unknown) => {
    const a = JSON.parse(String(before)) as Record<string, unknown>;
    const b = JSON.parse(String(after)) as Record<string, unknown>;
    const changed: Record<string, unknown> = {};
    let any = false;
    for (const [k, v] of Object.entries(b)) {
      if (a[k] !== v) {
        changed[k] = v;
        any = true;
      }
    }
    return any ? JSON.stringify(changed) : null;
  });
  return state;
}

/** Writes made before the sync feature starts (CLI, migrations) carry this database's writer id. */
export const UNPAIRED_WRITER = 'unpaired';

/** Before migrations: the writer id, if this database already has one (sync feature, 050). */
export function loadWriter(db: Database): void {
  const settings = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'settings'").pluck().get();
  if (!settings) return;
  const get = db.prepare('SELECT value FROM settings WHERE key = ?').pluck();
  const site = get.get('sync.site_id') as string | undefined;
  const incarnation = get.get('sync.incarnation') as string | undefined;
  if (site && incarnation) captureState(db).writer = `${site}/${incarnation}`;
}

/** After migrations: the HLC never goes below what this database already recorded. */
export function initCapture(db: Database): void {
  loadWriter(db);
  const state = captureState(db);
  const exists = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'sync_outbox'").pluck().get();
  if (!exists) return;
  state.hlc.observe(db.prepare('SELECT MAX(hlc) FROM sync_outbox').pluck().get() as string | null);
  state.hlc.observe(db.prepare('SELECT MAX(hlc) FROM sync_versions').pluck().get() as string | null);
}
