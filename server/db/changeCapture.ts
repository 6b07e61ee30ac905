/**
 * Change capture for sync, one interface over both backends (docs/sync.md, "How changes are
 * captured"). Every write to a synced table is recorded in sync_outbox by triggers, in the write's
 * transaction; what the triggers need from the application comes from here:
 *
 * - SQLite: triggers call the JavaScript functions db/capture.ts registers on the connection,
 *   which read the state this object points at (the single writer makes that state the
 *   transaction's).
 * - PostgreSQL: triggers in PL/pgSQL (server/db/postgres/050_sync_capture.sql) read
 *   transaction-local settings that a transaction-start hook sets: writer, group and an HLC base
 *   from this process's clock. HLCs and seqs are handed out at commit from the database-wide clock.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { formatHlc, Hlc } from '../platform/hlc.ts';
import { captureState, UNPAIRED_WRITER } from './capture.ts';
import { SqliteStore } from './sqliteStore.ts';
import type { Executor, Store } from './store.ts';

/** The origin of a remote change being applied: its rows carry this writer and HLC. */
export interface Origin {
  writer: string;
  hlc: string;
}

export interface ChangeCapture {
  /** This process's hybrid logical clock (the app's injected clock; received HLCs move it). */
  readonly hlc: Hlc;
  /** The writer id of local changes (site_id/incarnation); set by the sync feature. */
  writer: string;
  /**
   * Runs `fn`, whose writes on `tx` are recorded as the remote change `origin` (its writer and HLC,
   * already pushed and pulled) instead of local ones. Call inside a savepoint: on an error the
   * savepoint's rollback also undoes the context (PostgreSQL), so it is reset only on success.
   */
  applying<T>(tx: Executor, origin: Origin, fn: () => Promise<T>): Promise<T>;
}

const captures = new WeakMap<Store, ChangeCapture>();

/** The store's change capture (one per store), its clock reading `now`. */
export async function changeCapture(store: Store, now: () => number): Promise<ChangeCapture> {
  let capture = captures.get(store);
  if (!capture) {
    capture = store instanceof SqliteStore ? sqliteCapture(store) : await postgresCapture(store);
    captures.set(store, capture);
  }
  setNow(capture, now);
  return capture;
}

const clocks = new WeakMap<ChangeCapture, (now: () => number) => void>();
function setNow(capture: ChangeCapture, now: () => number): void {
  clocks.get(capture)?.(now);
}

function sqliteCapture(store: SqliteStore): ChangeCapture {
  const state = captureState(store.connection);
  const capture: ChangeCapture = {
    get hlc() {
      return state.hlc;
    },
    get writer() {
      return state.writer;
    },
    set writer(w: string) {
      state.writer = w;
    },
    async applying(_tx, origin, fn) {
      // The store runs one transaction at a time, and nothing else writes on its connection meanwhile.
      state.applying = { writer: origin.writer, hlc: origin.hlc };
      try {
        return await fn();
      } finally {
        state.applying = null;
      }
    },
  };
  clocks.set(capture, (now) => (state.now = now));
  return capture;
}

async function postgresCapture(store: Store): Promise<ChangeCapture> {
  let clock: () => number = () => Date.now();
  const hlc = new Hlc(() => clock());
  // Never below what this database handed out (the database clock decides at commit anyway).
  const row = await sql<{ hlc: number }>`SELECT hlc FROM sync_clock WHERE id = 1`.execute(store.db);
  const top = Number(row.rows[0]?.hlc ?? 0);
  if (top > 0) hlc.observe(formatHlc(Math.floor(top / 65536), top % 65536));
  const capture: ChangeCapture = {
    hlc,
    writer: UNPAIRED_WRITER,
    async applying(tx, origin, fn) {
      await sql`SELECT set_config('waymark.applying_writer', ${origin.writer}, true), set_config('waymark.applying_hlc', ${origin.hlc}, true)`.execute(tx);
      const out = await fn();
      await sql`SELECT set_config('waymark.applying_hlc', '', true)`.execute(tx);
      return out;
    },
  };
  store.onTransactionStart(async (tx) => {
    await sql`SELECT set_config('waymark.writer', ${capture.writer}, true), set_config('waymark.group', ${randomBytes(8).toString('hex')}, true),
                     set_config('waymark.hlc_base', ${hlc.send()}, true)`.execute(tx);
  });
  clocks.set(capture, (now) => (clock = now));
  return capture;
}
