/**
 * Durable recording of a batch of scans: scan events, scan_count and `node.scanned` outbox
 * events in ONE transaction (group commit). The outbox events are written only for an
 * organization with an endpoint subscribed to `node.scanned` (docs/scans.md, "What is
 * recorded"). Runs on the caller's connection; sink.ts decides when a commit counts as durable.
 */
import { randomBytes } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import { sqliteSubscriptionCheck } from '../webhooks/index.ts';
import { prepareScanCount } from '../nodes/index.ts';
import { prepareSqliteTapSettle, TAP_UNVERIFIED_EVENT, tapUnverifiedEvent, type TapClaim } from '../tapproofs/index.ts';
import type { ScanEventInsert } from './repo.ts';

export interface ScanRecord extends ScanEventInsert {
  slug: string;
  /**
   * A tag URL's proof, checked before recording; settled here in the batch's transaction (the
   * counter claimed, or the policy read): fills in `source`, and `outcome` when the node refuses.
   */
  tap?: TapClaim;
}

/** Per scan: its event id, or null if it could not be recorded (e.g. the node was just deleted). */
export type WriteResult = Array<number | null>;

/**
 * Outbox event ids: `evt_` + a UUIDv7 (time-ordered; 32 hex digits like the other outbox ids).
 * Time order keeps the outbox's unique index append-only, which matters at thousands of scans/s.
 * Random bits come from a 4 KiB pool (one getrandom call per 512 ids).
 */
export class OutboxIds {
  private lastMs = 0;
  private seq = 0;
  private pool = Buffer.alloc(0);
  private offset = 0;

  next(at = Date.now()): string {
    let now = at;
    if (now <= this.lastMs) {
      now = this.lastMs;
      this.seq = (this.seq + 1) & 0xfff;
    } else {
      this.lastMs = now;
      this.seq = 0;
    }
    if (this.offset + 8 > this.pool.length) {
      this.pool = randomBytes(4096);
      this.offset = 0;
    }
    const bytes = Buffer.allocUnsafe(16);
    bytes.writeUIntBE(now, 0, 6);
    bytes[6] = 0x70 | (this.seq >> 8);
    bytes[7] = this.seq & 0xff;
    this.pool.copy(bytes, 8, this.offset, this.offset + 8);
    this.offset += 8;
    bytes[8] = 0x80 | ((bytes[8] as number) & 0x3f);
    return `evt_${bytes.toString('hex')}`;
  }
}

export class ScanWriter {
  private readonly db: Database;
  private readonly insertScan: Statement;
  private readonly insertOutbox: Statement;
  /** scan_count is the nodes feature's column: its statement, prepared on this connection. */
  private readonly addCount: (nodeId: string, n: number) => void;
  private readonly subscribed: (orgId: string, type: string) => boolean;
  private readonly epochStmt: Statement;
  /** Per organization: does an endpoint subscribe to node.scanned? Valid while the epoch holds. */
  private readonly emits = new Map<string, boolean>();
  private epoch = -1;
  private readonly tx: (scans: ScanRecord[]) => WriteResult;
  private readonly ids = new OutboxIds();
  private readonly settleTap: (claim: TapClaim, at: string) => boolean;

  constructor(db: Database) {
    this.db = db;
    // The node's existence is checked here, not by a foreign key (migration 060).
    this.insertScan = db.prepare(
      `INSERT INTO scan_events (node_id, org_id, ts, device_type, os, browser, country, source, rule_id, outcome, is_bot, visitor_hash)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM nodes WHERE id = ?)`,
    );
    this.insertOutbox = db.prepare('INSERT INTO outbox_events (id, org_id, type, data_json, created_at) VALUES (?, ?, ?, ?, ?)');
    this.addCount = prepareScanCount(db);
    this.settleTap = prepareSqliteTapSettle(db);
    // Any endpoint, active or not (inactive ones still queue, webhooks/service.ts fanOut).
    this.subscribed = sqliteSubscriptionCheck(db);
    // Moves with every webhook change (migration 062), and with node, rule and slug changes.
    this.epochStmt = db.prepare('SELECT epoch FROM scan_cache_epoch WHERE id = 1').pluck();
    const tx = db.transaction((scans: ScanRecord[]) => this.writeAll(scans));
    this.tx = (scans) => tx.immediate(scans);
  }

  /** Records the batch in one transaction; throws if the transaction as a whole fails. */
  write(scans: ScanRecord[]): WriteResult {
    return this.tx(scans);
  }

  private writeAll(scans: ScanRecord[]): WriteResult {
    const results: WriteResult = [];
    const counts = new Map<string, number>();
    const now = Date.now();
    // Read in this transaction: an endpoint created before it commits gets these events, one
    // created after it starts after them anyway (webhooks.start_seq).
    const epoch = this.epochStmt.get() as number;
    if (epoch !== this.epoch) {
      this.emits.clear();
      this.epoch = epoch;
    }
    const emits = this.emits;
    for (const s of scans) {
      if (s.tap) this.settle(s, s.tap, now);
      const info = this.insertScan.run(s.node_id, s.org_id, s.ts, s.device_type, s.os, s.browser, s.country, s.source, s.rule_id, s.outcome, s.is_bot, s.visitor_hash, s.node_id);
      if (info.changes === 0) {
        // The node was deleted between resolving and recording: this scan is not recorded
        // (and so will not be answered as served).
        results.push(null);
        continue;
      }
      const id = Number(info.lastInsertRowid);
      results.push(id);
      if (s.is_bot) continue;
      counts.set(s.node_id, (counts.get(s.node_id) ?? 0) + 1);
      let emit = emits.get(s.org_id);
      if (emit === undefined) {
        emit = this.subscribed(s.org_id, 'node.scanned');
        emits.set(s.org_id, emit);
      }
      if (!emit) continue;
      const at = new Date(s.ts).toISOString();
      const data = {
        scan_id: id,
        node: { id: s.node_id, slug: s.slug },
        timestamp: at,
        device_type: s.device_type,
        os: s.os,
        browser: s.browser,
        country: s.country,
        source: s.source,
        rule_id: s.rule_id,
        outcome: s.outcome,
      };
      this.insertOutbox.run(this.ids.next(now), s.org_id, 'node.scanned', JSON.stringify(data), at);
    }
    for (const [nodeId, n] of counts) this.addCount(nodeId, n);
    return results;
  }

  /** The tap claim, then the scan's source (and outcome when refused); node.tap_unverified for a failure. */
  private settle(s: ScanRecord, claim: TapClaim, now: number): void {
    const at = new Date(s.ts).toISOString();
    const failed = this.settleTap(claim, at);
    s.source = claim.verified ? 'nfc_verified' : 'nfc_unverified';
    if (claim.refused) {
      s.outcome = 'unverified';
      s.rule_id = null;
    }
    if (failed && this.subscribed(s.org_id, TAP_UNVERIFIED_EVENT)) {
      this.insertOutbox.run(this.ids.next(now), s.org_id, TAP_UNVERIFIED_EVENT, JSON.stringify(tapUnverifiedEvent(claim, at)), at);
    }
  }
}
