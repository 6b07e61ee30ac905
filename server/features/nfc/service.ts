/**
 * NFC tag programming: binds tags to nodes, runs batch writing sessions and tells listeners
 * (the SSE stream) what happens. Knows nothing of HTTP or of nfc-pcsc: it talks to an
 * `NfcDevice` (the PC/SC bridge, or a fake in tests).
 */
import { EventEmitter } from 'node:events';
import type { Executor, Store } from '../../db/store.ts';
import type { Clock } from '../../platform/clock.ts';
import { ConflictError, notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { Outbox } from '../../platform/outbox.ts';
import type { TagProtection } from '../../schemas/nfc.ts';
import type { NodeT } from '../../schemas/nodes.ts';
import type { BatchService } from '../batches/index.ts';
import { type NodeRow, type NodeService, scanUrl } from '../nodes/index.ts';
import { assertPermanentScanBase } from '../organization/index.ts';
import { advice } from './advice.ts';
import type { BridgeStatus, NfcDevice } from './bridge.ts';
import { nfcTagUrl } from './ndef.ts';
import { ntag424KeySet, SUN_URL_TEMPLATE_SUFFIX } from './ntag424/index.ts';
import { NTAG424_TYPE, ntag424Messages } from './ntag424-program.ts';
import { mirrorUrl, unmirrored } from './ntag21x.ts';
import { NfcError, type NfcErrorCode, type TagInfo } from './program.ts';
import { protectionReading, type SunCheckOf, type TagProtectionReading } from './protectionReading.ts';
import type { CardOnReader, Ntag424KeysHex } from './protocol.ts';
import type { ItemRow, NfcRepo, SessionRow } from './repo.ts';
import type { TagPasswords } from './tagPasswords.ts';

export interface NfcServiceDeps {
  store: Store;
  clock: Clock;
  outbox: Pick<Outbox, 'record'>;
  repo: NfcRepo;
  /** Tags are bound to nodes through the nodes feature (it records node.updated). */
  nodeService: NodeService;
  batchService: BatchService;
  /** The reader bridge; null when NFC is disabled on this instance. */
  device: NfcDevice | null;
  /** NTAG 424 DNA keys and per-tag state (the tap proofs feature, wired by app.ts); null: 424 tags are refused. */
  tagKeys?: NfcTagKeys | null;
  /** Per-tag NTAG21x passwords (from the secret store); without it tags cannot be protected. */
  passwords?: TagPasswords | undefined;
}

/** NTAG21x options of a write or a session (docs/nfc.md, "NTAG21x evidence and passwords"). */
export interface Ntag21xOptions {
  mirror?: boolean | undefined;
  protect?: boolean | undefined;
}

/** What personalising an NTAG 424 DNA needs from the tap proofs feature. */
export interface NfcTagKeys {
  /** The organization's current master key (created on first use), from the secret store. */
  current(orgId: string): { version: number; key: Buffer };
  /** An older version of it (to re-key a tag keyed from that version), or null when the store has no such version. */
  version(orgId: string, version: number): { version: number; key: Buffer } | null;
  /** The current version's number, null when the organization has no master key yet (creates none: check mode). */
  currentVersion(orgId: string): number | null;
  /** The scan-time SUN check without the replay guard (check mode: nothing claimed or stored). */
  checkSun: SunCheckOf;
  /** Records the personalised tag (UID as upper-case hex, key version) in the caller's transaction. */
  register(tx: Executor, tag: { org_id: string; uid: string; node_id: string; key_version: number }): Promise<void>;
}

export interface Refusal {
  code: NfcErrorCode;
  message: string;
  uid?: string;
  serial?: string | null;
  slug?: string;
  /** For `uid_bound` and `already_written`: the node the tag belongs to. */
  bound_to?: { slug: string; serial: string | null; label: string };
  /** For `duplicate_url`: the node whose URL the tag holds (bound to another tag). */
  holds?: NodeBrief;
}

/** A node as the field screens name it. */
export interface NodeBrief {
  slug: string;
  serial: string | null;
  label: string;
  status: string;
  hardware_id: string | null;
}

/**
 * What a tag on the reader holds, for this organization (check mode: a tag placed with no
 * session or pending write is read and shown).
 */
export interface TagReading {
  reader: string;
  uid: string;
  type: string | null;
  data_area_bytes: number | null;
  /** blank: nothing written; node: a node's scan URL; other_url: a URL that is not one of ours; other_data; unsupported. */
  content: 'blank' | 'node' | 'other_url' | 'other_data' | 'unsupported';
  url: string | null;
  /** The node whose scan URL the tag holds. */
  node: NodeBrief | null;
  /** The node this tag (its UID) is bound to. */
  bound_to: NodeBrief | null;
  /** One line for the screen. */
  message: string;
  /** Something to act on: two tags with one URL, a tag bound to a node it does not hold, … */
  warning: string | null;
  /** What protects the tag and whether it checks for this organization; null for a card that cannot be used. */
  protection: TagProtectionReading | null;
}

export interface TagWritten {
  node: NodeT;
  serial: string | null;
  slug: string;
  hardware_id: string;
  tag_type: string;
  url: string;
  locked: boolean;
  /** The URL carries the UID + NFC counter mirror. */
  mirror: boolean;
  /** The tag is protected with its derived password. */
  protected: boolean;
  reassigned_from: string | null;
  session_id: string | null;
  /** APDUs exchanged with the tag: its detection when presented, the writes, the verify reads (and the lock). */
  apdus: number;
  /** The tag already held this URL (written before a crash): verified and bound, nothing written. */
  recognised: boolean;
  protection: TagProtection;
  /** NTAG 424 DNA: the master key version its keys were diversified from. */
  key_version: number | null;
  ms: number;
  written_at: string;
}

export interface SessionView {
  id: string;
  batch_id: string;
  batch_label: string;
  status: SessionRow['status'];
  lock_tags: boolean;
  mirror_tags: boolean;
  protect_tags: boolean;
  allow_reassign: boolean;
  /** What to ask the technician for: "Place tag for <serial>". Null when nothing is left. */
  next: { serial: string | null; slug: string; node_id: string; url: string; revisit: boolean } | null;
  counts: { total: number; written: number; pending: number; skipped: number; lost: number };
  last_refusal: Refusal | null;
  recent: Array<{ serial: string | null; slug: string; hardware_id: string; protection: TagProtection; written_at: string }>;
  started_at: string;
  updated_at: string;
}

export type NfcEvent =
  | { type: 'reader'; data: BridgeStatus }
  | { type: 'tag'; data: CardOnReader }
  | { type: 'tag.off'; data: { reader: string; uid: string | null } }
  | { type: 'tag.written'; data: TagWritten }
  | { type: 'tag.refused'; data: Refusal }
  | { type: 'session'; data: SessionView | null };

/** An NfcError carrying what the console needs to offer a way out (e.g. Reassign). */
export class NfcRefusal extends NfcError {
  readonly refusal: Refusal;
  constructor(refusal: Refusal) {
    super(refusal.code, refusal.message);
    this.refusal = refusal;
  }
}

/** Registers a tag written with the mirror for scan-time checks (features/tapproofs), in the write's transaction. */
export type MirrorRegistry = (tx: Executor, tag: { org_id: string; uid: string; node_id: string }) => Promise<void>;

interface PendingSingle {
  orgId: string;
  nodeId: string;
  lock: boolean;
  mirror: boolean;
  protect: boolean;
  reassign: boolean;
  resolve: (w: TagWritten) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

const WRITABLE_BATCH = ['ready', 'writing'];
/** Node statuses a verified tag turns into `active` (a paused or retired node keeps its status). */
const ACTIVATE_FROM = ['in_production', 'draft', 'lost'];

export class NfcService {
  private readonly deps: NfcServiceDeps;
  private readonly emitter = new EventEmitter();
  private busy = false;
  /** A card presented while busy: taken up once the reader is free, if still on it. */
  private waiting: CardOnReader | null = null;
  private single: PendingSingle | null = null;
  private lastRefusal: Refusal | null = null;
  private readonly unsubscribe: Array<() => void> = [];
  private mirrorRegistry: MirrorRegistry | null = null;

  constructor(deps: NfcServiceDeps) {
    this.deps = deps;
    this.emitter.setMaxListeners(100);
  }

  /** Set by createApp once the tap proof feature exists (it is created after this one). */
  useMirrorRegistry(registry: MirrorRegistry): void {
    this.mirrorRegistry = registry;
  }

  /** Subscribes to the reader. An active session found in the database resumes by itself. */
  start(): void {
    const device = this.deps.device;
    if (!device) return;
    const onStatus = (s: BridgeStatus) => this.emit({ type: 'reader', data: s });
    const onCard = (c: CardOnReader) => {
      this.emit({ type: 'tag', data: c });
      void this.onCard(c);
    };
    const onOff = (e: { reader: string; uid: string | null }) => this.emit({ type: 'tag.off', data: e });
    device.on('status', onStatus);
    device.on('card', onCard);
    device.on('card.off', onOff);
    this.unsubscribe.push(
      () => device.off('status', onStatus),
      () => device.off('card', onCard),
      () => device.off('card.off', onOff),
    );
  }

  stop(): void {
    for (const u of this.unsubscribe.splice(0)) u();
    if (this.single) {
      clearTimeout(this.single.timer);
      this.single.reject(new NfcError('no_reader', 'NFC stopped.'));
      this.single = null;
    }
  }

  /** Listen to everything the SSE stream sends. Returns the unsubscribe function. */
  subscribe(listener: (e: NfcEvent, orgId: string | null) => void): () => void {
    this.emitter.on('event', listener);
    return () => this.emitter.off('event', listener);
  }

  readerStatus(): BridgeStatus {
    return (
      this.deps.device?.status() ?? {
        state: 'unavailable',
        ...advice.disabled,
        readers: [],
        cards: [],
        generation: 0,
      }
    );
  }

  // ---- sessions -------------------------------------------------------------------------

  /** The active session of this organization (the one being resumed after a restart), if any. */
  async session(orgId: string): Promise<SessionView | null> {
    const db = this.db;
    const s = await this.deps.repo.activeSession(db);
    return s && s.org_id === orgId ? this.view(db, s) : null;
  }

  /** 409 while the scan base is loopback, unless `allow_local_scan_base` (test tags): a tag's URL is permanent. */
  async startSession(
    orgId: string,
    batchId: string,
    options: { lock?: boolean | undefined; allow_reassign?: boolean | undefined; allow_local_scan_base?: boolean | undefined } & Ntag21xOptions = {},
  ): Promise<SessionView> {
    if (options.protect) this.requirePasswords();
    const { repo, store } = this.deps;
    const view = await store.transaction(async (tx) => {
      const batch = await this.deps.batchService.get(orgId, batchId, tx);
      assertPermanentScanBase(await this.deps.nodeService.scanBaseOf(orgId, tx), options.allow_local_scan_base, 'tag');
      const active = await repo.activeSession(tx);
      if (active) {
        if (active.org_id === orgId && active.batch_id === batch.id) return this.view(tx, active);
        throw new ConflictError('Another tag writing session is active: stop it first');
      }
      if (!WRITABLE_BATCH.includes(batch.status)) {
        throw new ConflictError(`Cannot write tags for a batch that is ${batch.status} (it must be ready or writing)`);
      }
      const now = this.now();
      const session: SessionRow = {
        id: newId(),
        org_id: orgId,
        batch_id: batch.id,
        status: 'active',
        lock_tags: options.lock ? 1 : 0,
        allow_reassign: options.allow_reassign ? 1 : 0,
        mirror_tags: options.mirror ? 1 : 0,
        protect_tags: options.protect ? 1 : 0,
        started_at: now,
        updated_at: now,
        ended_at: null,
      };
      await repo.insertSession(tx, session);
      const { rows } = await this.deps.nodeService.list(orgId, { batch_id: batch.id, limit: batch.quantity, offset: 0 }, tx);
      await repo.insertItems(
        tx,
        rows.map((node) => ({
          session_id: session.id,
          node_id: node.id,
          serial_number: node.serial_number ?? 0,
          state: node.hardware_id ? 'written' : node.status === 'lost' ? 'lost' : 'pending',
          uid: node.hardware_id,
          attempts: 0,
          last_error: null,
          updated_at: now,
        })),
      );
      await this.completeIfDone(tx, session);
      return this.view(tx, (await repo.session(tx, session.id))!);
    });
    this.lastRefusal = null;
    this.emit({ type: 'session', data: view }, orgId);
    return view;
  }

  async stopSession(orgId: string): Promise<SessionView> {
    const view = await this.deps.store.transaction(async (tx) => {
      const s = await this.requireSession(tx, orgId);
      const now = this.now();
      await this.deps.repo.updateSession(tx, { id: s.id, status: 'stopped', updated_at: now, ended_at: now });
      return this.view(tx, (await this.deps.repo.session(tx, s.id))!);
    });
    this.emit({ type: 'session', data: null }, orgId);
    return view;
  }

  /** Leave the serial asked for now; it is asked again after every pending one. */
  skip(orgId: string): Promise<SessionView> {
    return this.changeSession(orgId, async (tx, s) => {
      const item = await this.deps.repo.nextItem(tx, s.id);
      if (!item) throw new ConflictError('Nothing left to skip in this session');
      await this.deps.repo.updateItem(tx, { ...item, state: 'skipped', updated_at: this.now() });
    });
  }

  /** Write a serial again on a new tag (default: the last one written). */
  redo(orgId: string, serial?: string): Promise<SessionView> {
    return this.changeSession(orgId, async (tx, s) => {
      const item = await this.findItem(tx, s, serial, (i) => i.state === 'written', true);
      // Pending items are asked for in serial order, so a lower unwritten serial comes first.
      await this.deps.repo.updateItem(tx, { ...item, state: 'pending', updated_at: this.now() });
    });
  }

  /** The tag for a serial is lost or damaged: the node becomes `lost`, the session moves on. */
  reportLost(orgId: string, serial?: string): Promise<SessionView> {
    return this.changeSession(orgId, async (tx, s) => {
      const item = serial ? await this.findItem(tx, s, serial, () => true, false) : await this.deps.repo.nextItem(tx, s.id);
      if (!item) throw new ConflictError('No serial to report lost');
      const node = await this.deps.nodeService.byId(tx, item.node_id);
      if (node && node.status !== 'lost') await this.deps.nodeService.change(tx, node, { status: 'lost' });
      await this.deps.repo.updateItem(tx, { ...item, state: 'lost', updated_at: this.now() });
      await this.maybeDeploy(tx, s.org_id, s.batch_id);
    });
  }

  /** Try the tag on the reader again for the serial asked for (e.g. after choosing Reassign). */
  async retry(orgId: string, options: { reassign?: boolean } = {}): Promise<TagWritten> {
    const s = await this.requireSession(this.db, orgId);
    const card = this.presentCard();
    if (!card) throw new NfcError('no_tag', 'No tag on the reader: place a tag.');
    const item = await this.deps.repo.nextItem(this.db, s.id);
    if (!item) throw new ConflictError('Every tag of this session is written');
    return this.writeSessionItem(s, item, card, { reassign: options.reassign === true || s.allow_reassign === 1, automatic: false });
  }

  // ---- single node ----------------------------------------------------------------------

  /**
   * Writes one node's tag: the tag on the reader now, or the next one presented within
   * `timeoutMs`. Refusals reject with an NfcError (NfcRefusal for a tag bound elsewhere).
   */
  async writeNode(
    orgId: string,
    slug: string,
    options: { lock?: boolean | undefined; reassign?: boolean | undefined; timeoutMs?: number | undefined; allowLocalScanBase?: boolean | undefined } & Ntag21xOptions = {},
  ): Promise<TagWritten> {
    if (options.protect) this.requirePasswords();
    const node = await this.deps.nodeService.get(orgId, slug);
    assertPermanentScanBase(await this.deps.nodeService.scanBaseOf(orgId), options.allowLocalScanBase, 'tag');
    if (!this.deps.device) throw new NfcError('unavailable', this.readerStatus().message);
    if (this.single || this.busy) throw new NfcError('busy', 'The reader is busy with another write.');
    const status = this.readerStatus();
    if (status.state === 'unavailable') throw new NfcError('unavailable', status.message);
    if (status.state === 'no_daemon') throw new NfcError('no_daemon', status.message);
    if (status.state === 'starting') throw new NfcError('busy', 'The NFC bridge is (re)starting: try again in a moment.');
    if (status.state === 'no_reader') throw new NfcError('no_reader', status.message);
    return new Promise<TagWritten>((resolve, reject) => {
      const timeoutMs = options.timeoutMs ?? 30_000;
      const timer = setTimeout(() => {
        this.single = null;
        reject(new NfcError('no_tag', `No tag was presented within ${Math.round(timeoutMs / 1000)} s.`));
      }, timeoutMs);
      this.single = {
        orgId,
        nodeId: node.id,
        lock: options.lock === true,
        mirror: options.mirror === true,
        protect: options.protect === true,
        reassign: options.reassign === true,
        resolve,
        reject,
        timer,
      };
      const card = this.presentCard();
      if (card) void this.onCard(card);
    });
  }

  // ---- internals ------------------------------------------------------------------------

  private get db(): Executor {
    return this.deps.store.db;
  }

  private presentCard(): CardOnReader | undefined {
    return this.deps.device?.status().cards[0];
  }

  private async onCard(card: CardOnReader): Promise<void> {
    if (this.busy) {
      this.waiting = card;
      return;
    }
    const single = this.single;
    if (single) {
      this.single = null;
      clearTimeout(single.timer);
      this.busy = true;
      try {
        const node = await this.deps.nodeService.byId(this.db, single.nodeId);
        if (!node) throw notFound.node();
        const { lock, mirror, protect, reassign } = single;
        single.resolve(await this.perform(single.orgId, node, card, { lock, mirror, protect, reassign, sessionId: null, automatic: false }));
      } catch (err) {
        single.reject(err as Error);
      } finally {
        this.release();
      }
      return;
    }
    const session = await this.deps.repo.activeSession(this.db);
    if (!session) return;
    const item = await this.deps.repo.nextItem(this.db, session.id);
    if (!item) return;
    await this.writeSessionItem(session, item, card, { reassign: session.allow_reassign === 1, automatic: true }).catch(() => undefined);
  }

  private async writeSessionItem(session: SessionRow, item: ItemRow, card: CardOnReader, how: { reassign: boolean; automatic: boolean }): Promise<TagWritten> {
    if (this.busy) throw new NfcError('busy', 'The reader is busy with another write.');
    this.busy = true;
    try {
      const node = await this.deps.nodeService.byId(this.db, item.node_id);
      if (!node) throw notFound.node();
      try {
        const written = await this.perform(session.org_id, node, card, {
          lock: session.lock_tags === 1,
          mirror: session.mirror_tags === 1,
          protect: session.protect_tags === 1,
          sessionId: session.id,
          ...how,
        });
        this.lastRefusal = null;
        this.emit({ type: 'session', data: await this.view(this.db, (await this.deps.repo.session(this.db, session.id))!) }, session.org_id);
        return written;
      } catch (err) {
        const view = await this.deps.store.transaction(async (tx) => {
          const fresh = await this.deps.repo.item(tx, session.id, item.node_id);
          if (fresh) await this.deps.repo.updateItem(tx, { ...fresh, attempts: fresh.attempts + 1, last_error: (err as Error).message, updated_at: this.now() });
          return this.view(tx, (await this.deps.repo.session(tx, session.id))!);
        });
        this.emit({ type: 'session', data: view }, session.org_id);
        throw err;
      }
    } finally {
      this.release();
    }
  }

  /** Frees the reader, and takes up a card presented meanwhile that is still on it. */
  private release(): void {
    this.busy = false;
    const card = this.waiting;
    this.waiting = null;
    const present = this.presentCard();
    if (card && present && present.reader === card.reader && present.info.uid === card.info.uid) void this.onCard(card);
  }

  /**
   * Checks, writes through the device (or only verifies a tag that already holds the URL), and
   * commits the binding. `automatic`: the tag was just presented to a session (no one pressed
   * anything), so a finished tag of another node is never taken over and a tag already holding a
   * node's URL is bound to that node.
   */
  private async perform(
    orgId: string,
    node: NodeRow,
    card: CardOnReader,
    opts: { lock: boolean; mirror: boolean; protect: boolean; reassign: boolean; sessionId: string | null; automatic: boolean },
  ): Promise<TagWritten> {
    const device = this.deps.device!;
    const info: TagInfo = card.info;
    const base = { uid: info.uid, serial: node.serial, slug: node.slug };
    try {
      if (!info.supported) {
        const r = info.refusal ?? { code: 'unsupported_card' as const, message: 'Unsupported card.' };
        throw new NfcRefusal({ ...base, code: r.code, message: r.message });
      }
      const bound = await this.deps.nodeService.byHardwareId(this.db, orgId, info.uid);
      // A mirrored tag reads with its UID and counter in the URL: compare what was written.
      const heldUrl = info.content?.kind === 'uri' ? unmirrored(info.content.url) : null;
      const held = heldUrl ? await this.nodeForUrl(this.db, orgId, heldUrl) : undefined;
      // Only a tag holding exactly what Waymark writes (with ?nfc) can be verified instead of written.
      // A session that mirrors, protects or locks writes (and configures) instead; an NTAG 424 DNA decides itself.
      const recognisable =
        held !== undefined && (info.type === NTAG424_TYPE || (heldUrl === nfcTagUrl(await this.scanUrlOf(orgId, held.slug)) && !opts.lock && !opts.mirror && !opts.protect));
      let target = node;
      let verifyOnly = false;
      if (bound && bound.id !== node.id) {
        if (held?.id === bound.id && !(opts.reassign && !opts.automatic)) {
          // A finished tag (after a crash or restart it is still on the reader): not a candidate for Reassign.
          throw new NfcRefusal({
            ...base,
            code: 'already_written',
            message: `Already written as ${nameOf(bound)} — lift it${opts.sessionId ? ` and place the tag for ${nameOf(node)}` : ''}.`,
            bound_to: { slug: bound.slug, serial: bound.serial, label: bound.label },
          });
        }
        if (!opts.reassign) {
          throw new NfcRefusal({
            ...base,
            code: 'uid_bound',
            message: `This tag (UID ${info.uid}) is already bound to ${nameOf(bound)} (${bound.slug}). Use another tag, or choose Reassign to move it to ${nameOf(node)}.`,
            bound_to: { slug: bound.slug, serial: bound.serial, label: bound.label },
          });
        }
      } else if (!bound && held) {
        if (held.id === node.id) verifyOnly = recognisable;
        else if (opts.automatic && held.hardware_id === null) {
          // Written for `held` but never bound (lifted during the verify read, then a crash): it is that node's tag.
          if (recognisable) {
            target = held;
            verifyOnly = true;
          }
        } else if (opts.automatic) {
          throw new NfcRefusal({
            ...base,
            code: 'duplicate_url',
            message: `This tag holds the URL of ${nameOf(held)}, which is bound to another tag (UID ${held.hardware_id}): two tags would open ${nameOf(held)}. Lift it, or press Write tag on reader to write ${nameOf(node)} over it.`,
            holds: brief(held),
          });
        }
      }
      const dna = info.type === NTAG424_TYPE;
      const tagUrl = tagUrlFor(await this.scanUrlOf(orgId, target.slug), dna);
      // An NTAG 424 DNA proves its taps itself: no NTAG21x mirror, password or lock on it.
      const mirror = !!opts.mirror && !verifyOnly && !dna;
      const protect = !!opts.protect && !verifyOnly && !dna;
      const url = mirror ? mirrorUrl(tagUrl) : tagUrl;
      const keys = dna ? this.tagKeysFor(orgId, info.uid, info.ntag424?.keyVersion ?? null) : undefined;
      // A tag this organization mirrored or protected before has its configuration read first,
      // and any tag may turn out protected: the password is computed from its UID, never stored.
      const before = dna ? undefined : await this.deps.repo.lastWriteOfTag(this.db, orgId, info.uid);
      // A tag protected here authenticates with the master key version it was protected with (1 before versions
      // existed); any other tag with the current one. Protecting uses the current version (a rotation moves it).
      const passwords = dna ? undefined : this.deps.passwords;
      const authVersion = before?.protected === 1 ? (before.password_version ?? 1) : undefined;
      const password = passwords?.passwordFor(orgId, info.uid, { version: authVersion, create: opts.protect }) ?? undefined;
      const newPassword = protect ? (passwords?.passwordFor(orgId, info.uid, { create: true }) ?? undefined) : undefined;
      const t0 = performance.now();
      // An NTAG 424 DNA decides itself between personalising and only verifying (its key versions say how far it got).
      const outcome = await device.write({
        url,
        lock: !!opts.lock && !dna,
        verifyOnly: verifyOnly && !dna,
        reader: card.reader,
        expectUid: info.uid,
        ntag424: keys,
        mirror,
        protect,
        password: password && { pwd: password.pwd, pack: password.pack },
        newPassword: newPassword && { pwd: newPassword.pwd, pack: newPassword.pack },
        configured: before !== undefined && (before.mirror === 1 || before.protected === 1),
      });
      const ms = performance.now() - t0;
      // What the tag holds now (the bridge's card entry is this object: GET /nfc/tag sees it too).
      info.content = { kind: 'uri', url };
      if (dna && keys) info.ntag424 = { sdm: true, keyVersion: keys.version, ...(outcome.readCounter !== undefined ? { verifiedCounter: outcome.readCounter } : {}) };
      const written = await this.commit(orgId, target, {
        uid: info.uid,
        url,
        type: outcome.type,
        locked: outcome.locked,
        mirror: outcome.mirror,
        protected: outcome.protected,
        apdus: outcome.inspectApdus + outcome.apdus,
        recognised: outcome.recognised ?? verifyOnly,
        keyVersion: dna ? (keys?.version ?? null) : null,
        // A recognised tag that is protected was protected by the write before the crash: with the current version.
        passwordVersion: outcome.protected ? (newPassword?.version ?? (verifyOnly ? (passwords?.currentVersion(orgId) ?? null) : null)) : null,
        ms,
        sessionId: opts.sessionId,
      });
      this.emit({ type: 'tag.written', data: written }, orgId);
      return written;
    } catch (err) {
      const refusal: Refusal =
        err instanceof NfcRefusal
          ? err.refusal
          : err instanceof NfcError
            ? { ...base, code: err.code, message: err.message }
            : { ...base, code: 'io_error', message: (err as Error).message };
      this.lastRefusal = refusal;
      this.emit({ type: 'tag.refused', data: refusal }, orgId);
      device.feedback(card.reader, false);
      throw err instanceof NfcError ? err : new NfcRefusal(refusal);
    }
  }

  /** The node of this organization whose scan URL (with or without `?nfc`) is `url`. */
  private async nodeForUrl(db: Executor, orgId: string, url: string): Promise<NodeRow | undefined> {
    const slug = /\/v\/([^/?#]+)/.exec(url)?.[1];
    const written = unmirrored(url);
    if (!slug) return undefined;
    const node = await this.deps.nodeService.get(orgId, slug, db).catch(() => undefined);
    if (!node) return undefined;
    const scan = await this.scanUrlOf(orgId, node.slug, db);
    return url === scan || written === nfcTagUrl(scan) || written === mirrorUrl(nfcTagUrl(scan)) || isSunUrl(url, scan) ? node : undefined;
  }

  /**
   * The per-tag keys of an NTAG 424 DNA (hex, for the bridge child), from the organization's
   * current master key; with the keys of the older version the tag's key 0 says it is keyed from
   * (`keyVersion`, read at detection), so that the bridge re-keys it to the current version.
   */
  private tagKeysFor(orgId: string, uid: string, keyVersion: number | null): Ntag424KeysHex {
    const source = this.deps.tagKeys;
    if (!source) throw new NfcError('no_master_key', ntag424Messages.noKeys);
    const uidBytes = Buffer.from(uid.replace(/:/g, ''), 'hex');
    const hexKeys = (master: { version: number; key: Buffer }) => ({
      keys: ntag424KeySet(master.key, uidBytes).keys.map((k) => k.toString('hex')),
      version: master.version,
    });
    const master = source.current(orgId);
    const older = keyVersion !== null && keyVersion > 0 && keyVersion < master.version ? source.version(orgId, keyVersion) : null;
    return { ...hexKeys(master), ...(older ? { previous: hexKeys(older) } : {}) };
  }

  /** A node's scan URL: `{scan_base}/v/<slug>` with the organization's scan base. */
  private async scanUrlOf(orgId: string, slug: string, db: Executor = this.db): Promise<string> {
    return scanUrl(await this.deps.nodeService.scanBaseOf(orgId, db), slug);
  }

  /** What protects each node's bound tag, from the write that put that tag there (the batch manifest). */
  async tagProtections(db: Executor, nodes: Array<{ id: string; hardware_id: string | null }>): Promise<Map<string, TagProtection>> {
    const bound = nodes.filter((n) => n.hardware_id !== null);
    const uidOf = new Map(bound.map((n) => [n.id, n.hardware_id]));
    const out = new Map<string, TagProtection>();
    for (const w of await this.deps.repo.writesForNodes(db, bound.map((n) => n.id))) {
      if (uidOf.get(w.node_id) === w.uid) out.set(w.node_id, protectionOf(w.tag_type, w.mirror === 1, w.protected === 1));
    }
    return out;
  }

  /** What the tag on the reader holds, for this organization (GET /nfc/tag, `tag.read` events). */
  async currentTag(orgId: string): Promise<TagReading | null> {
    const card = this.presentCard();
    return card ? this.describeCard(orgId, card) : null;
  }

  async describeCard(orgId: string, card: CardOnReader): Promise<TagReading> {
    const { info } = card;
    const db = this.db;
    const boundRow = await this.deps.nodeService.byHardwareId(db, orgId, info.uid);
    const content = info.content;
    const url = content?.kind === 'uri' ? content.url : null;
    const heldRow = url ? await this.nodeForUrl(db, orgId, url) : undefined;
    const reading: TagReading = {
      reader: card.reader,
      uid: info.uid,
      type: info.type ?? null,
      data_area_bytes: info.dataAreaBytes ?? null,
      content: !info.supported && !content ? 'unsupported' : !content || content.kind === 'blank' ? 'blank' : heldRow ? 'node' : url ? 'other_url' : 'other_data',
      url,
      node: heldRow ? brief(heldRow) : null,
      bound_to: boundRow ? brief(boundRow) : null,
      message: '',
      warning: null,
      protection: await this.protectionOf(orgId, info, url),
    };
    const readOnly = info.readOnly ? ' (read-only)' : '';
    switch (reading.content) {
      case 'unsupported':
        reading.message = info.refusal?.message ?? 'Unsupported card.';
        break;
      case 'blank':
        reading.message = `Blank ${info.type ?? 'tag'}${readOnly}: nothing written on it yet.`;
        break;
      case 'node':
        reading.message = `${heldRow!.serial ? `${heldRow!.serial} “${heldRow!.label}”` : heldRow!.label} (${heldRow!.status})${readOnly}.`;
        break;
      case 'other_url':
        reading.message = `Another URL${readOnly}: ${url} (not a node of this organization).`;
        break;
      case 'other_data':
        reading.message = `Holds data that is not a URL${readOnly}.`;
        break;
    }
    if (heldRow && heldRow.hardware_id !== info.uid) {
      reading.warning =
        heldRow.hardware_id === null
          ? `Not bound to ${nameOf(heldRow)} yet: place it while a session asks for ${nameOf(heldRow)}, or write it from the node's page, to bind it.`
          : `${nameOf(heldRow)} is bound to another tag (UID ${heldRow.hardware_id}): two tags open ${nameOf(heldRow)}. Rewrite this one for another node or discard it.`;
    } else if (boundRow && heldRow?.id !== boundRow.id) {
      reading.warning = `This tag is bound to ${nameOf(boundRow)} but does not hold its URL: write it again for ${nameOf(boundRow)}.`;
    }
    return reading;
  }

  private async protectionOf(orgId: string, info: TagInfo, url: string | null): Promise<TagProtectionReading | null> {
    const keys = this.deps.tagKeys;
    const dna = info.type === NTAG424_TYPE;
    const last = dna ? undefined : await this.deps.repo.lastWriteOfTag(this.db, orgId, info.uid);
    return protectionReading(info, url, {
      orgId,
      checkSun: keys ? keys.checkSun : null,
      currentKeyVersion: dna && keys ? keys.currentVersion(orgId) : null,
      lastWrite: last ? { protected: last.protected === 1 } : undefined,
    });
  }

  /** Binds the written tag to its node (releasing it from another node) in one transaction. */
  private commit(
    orgId: string,
    node: NodeRow,
    w: { uid: string; url: string; type: string; locked: boolean; mirror: boolean; protected: boolean; apdus: number; recognised: boolean; keyVersion: number | null; passwordVersion: number | null; ms: number; sessionId: string | null },
  ): Promise<TagWritten> {
    const { repo, nodeService, outbox, store } = this.deps;
    return store.transaction(async (tx) => {
      const now = this.now();
      let reassignedFrom: string | null = null;
      const bound = await nodeService.byHardwareId(tx, orgId, w.uid);
      if (bound && bound.id !== node.id) {
        await nodeService.change(tx, bound, { hardware_id: null }, now);
        reassignedFrom = bound.slug;
      }
      const current = (await nodeService.byId(tx, node.id)) ?? node;
      const next = await nodeService.change(
        tx,
        current,
        { hardware_id: w.uid, status: ACTIVATE_FROM.includes(current.status) ? 'active' : current.status },
        now,
      );
      const api = nodeService.toApi(next, await nodeService.scanBaseOf(orgId, tx));
      const written: TagWritten = {
        node: api,
        serial: next.serial,
        slug: next.slug,
        hardware_id: w.uid,
        tag_type: w.type,
        url: w.url,
        locked: w.locked,
        mirror: w.mirror,
        protected: w.protected,
        reassigned_from: reassignedFrom,
        session_id: w.sessionId,
        apdus: w.apdus,
        recognised: w.recognised,
        protection: protectionOf(w.type, w.mirror, w.protected),
        key_version: w.keyVersion,
        ms: Math.round(w.ms * 10) / 10,
        written_at: now,
      };
      await outbox.record(tx, orgId, 'tag.written', {
        node: api,
        hardware_id: w.uid,
        tag_type: w.type,
        url: w.url,
        locked: w.locked,
        mirror: w.mirror,
        protected: w.protected,
        reassigned_from: reassignedFrom,
        written_at: now,
      });
      if (w.keyVersion !== null) {
        // The scan-time check needs the tag's UID and key version (tap proofs' table), bound in this same transaction.
        await this.deps.tagKeys!.register(tx, { org_id: orgId, uid: w.uid.replace(/:/g, ''), node_id: next.id, key_version: w.keyVersion });
      }
      await repo.logWrite(tx, { org_id: orgId, node_id: next.id, session_id: w.sessionId, uid: w.uid, url: w.url, tag_type: w.type, locked: w.locked ? 1 : 0, mirror: w.mirror ? 1 : 0, protected: w.protected ? 1 : 0, password_version: w.passwordVersion, written_at: now });
      const session = await repo.activeSession(tx);
      if (session && session.org_id === orgId) {
        const item = await repo.item(tx, session.id, next.id);
        if (item) await repo.updateItem(tx, { ...item, state: 'written', uid: w.uid, last_error: null, attempts: item.attempts + 1, updated_at: now });
        if (reassignedFrom && bound) {
          const old = await repo.item(tx, session.id, bound.id);
          if (old && old.state === 'written') await repo.updateItem(tx, { ...old, state: 'pending', uid: null, updated_at: now });
        }
      }
      // Tap proof tags are keyed by the UID as upper-case hex without separators.
      if (w.mirror && this.mirrorRegistry) await this.mirrorRegistry(tx, { org_id: orgId, uid: w.uid.replaceAll(':', ''), node_id: next.id });
      if (next.batch_id) {
        await this.deps.batchService.noteTagWritten(tx, next.batch_id);
        await this.maybeDeploy(tx, orgId, next.batch_id);
      }
      if (session && session.org_id === orgId) await this.completeIfDone(tx, session);
      return written;
    });
  }

  /** A batch whose every node is written or reported lost is deployed. */
  private async maybeDeploy(tx: Executor, orgId: string, batchId: string): Promise<void> {
    const batch = await this.deps.batchService.get(orgId, batchId, tx);
    if (!WRITABLE_BATCH.includes(batch.status)) return;
    const { rows } = await this.deps.nodeService.list(orgId, { batch_id: batchId, limit: batch.quantity, offset: 0 }, tx);
    if (rows.length > 0 && rows.every((n) => n.hardware_id !== null || n.status === 'lost')) {
      await this.deps.batchService.updateIn(tx, orgId, batchId, { status: 'deployed' });
    }
  }

  private async completeIfDone(tx: Executor, session: SessionRow): Promise<void> {
    const fresh = await this.deps.repo.session(tx, session.id);
    if (!fresh || fresh.status !== 'active') return;
    if (!(await this.deps.repo.nextItem(tx, session.id))) {
      const now = this.now();
      await this.deps.repo.updateSession(tx, { id: session.id, status: 'completed', updated_at: now, ended_at: now });
    }
  }

  private async requireSession(db: Executor, orgId: string): Promise<SessionRow> {
    const s = await this.deps.repo.activeSession(db);
    if (!s || s.org_id !== orgId) throw new ConflictError('No tag writing session is active');
    return s;
  }

  private async findItem(db: Executor, s: SessionRow, serial: string | undefined, filter: (i: ItemRow) => boolean, latest: boolean): Promise<ItemRow> {
    const items = await this.deps.repo.items(db, s.id);
    if (serial !== undefined) {
      for (const item of items) {
        const node = await this.deps.nodeService.byId(db, item.node_id);
        if (node && (node.serial === serial || node.slug === serial.toUpperCase())) return item;
      }
      throw new ConflictError(`Serial ${serial} is not part of this session`);
    }
    const matching = items.filter(filter).sort((a, b) => (latest ? b.updated_at.localeCompare(a.updated_at) || b.serial_number - a.serial_number : 0));
    if (!matching[0]) throw new ConflictError('No tag has been written in this session yet');
    return matching[0];
  }

  /** Runs a change to the active session in one transaction, completes it if done, tells listeners. */
  private async changeSession(orgId: string, fn: (tx: Executor, s: SessionRow) => Promise<void>): Promise<SessionView> {
    const { view, s } = await this.deps.store.transaction(async (tx) => {
      const s = await this.requireSession(tx, orgId);
      await fn(tx, s);
      await this.completeIfDone(tx, s);
      return { s, view: await this.view(tx, (await this.deps.repo.session(tx, s.id))!) };
    });
    this.emit({ type: 'session', data: view }, s.org_id);
    return view;
  }

  private async view(db: Executor, s: SessionRow): Promise<SessionView> {
    const { repo, nodeService } = this.deps;
    const items = await repo.items(db, s.id);
    const counts = { total: items.length, written: 0, pending: 0, skipped: 0, lost: 0 };
    for (const i of items) counts[i.state]++;
    const nextItem = s.status === 'active' ? await repo.nextItem(db, s.id) : undefined;
    const nextNode = nextItem ? await nodeService.byId(db, nextItem.node_id) : undefined;
    const batch = await this.deps.batchService.get(s.org_id, s.batch_id, db);
    const recentItems = items
      .filter((i) => i.state === 'written' && i.uid)
      .sort((a, b) => b.updated_at.localeCompare(a.updated_at) || b.serial_number - a.serial_number)
      .slice(0, 5);
    const recent = [];
    const protection = await this.tagProtections(db, recentItems.map((i) => ({ id: i.node_id, hardware_id: i.uid })));
    for (const i of recentItems) {
      const n = await nodeService.byId(db, i.node_id);
      recent.push({ serial: n?.serial ?? null, slug: n?.slug ?? '', hardware_id: i.uid!, protection: protection.get(i.node_id) ?? 'none', written_at: i.updated_at });
    }
    return {
      id: s.id,
      batch_id: s.batch_id,
      batch_label: batch.label,
      status: s.status,
      lock_tags: s.lock_tags === 1,
      mirror_tags: s.mirror_tags === 1,
      protect_tags: s.protect_tags === 1,
      allow_reassign: s.allow_reassign === 1,
      next: nextNode
        ? {
            serial: nextNode.serial,
            slug: nextNode.slug,
            node_id: nextNode.id,
            url: ((u) => (s.mirror_tags === 1 ? mirrorUrl(u) : u))(nfcTagUrl(await this.scanUrlOf(s.org_id, nextNode.slug, db))),
            revisit: nextItem!.state === 'skipped',
          }
        : null,
      counts,
      last_refusal: s.status === 'active' ? this.lastRefusal : null,
      recent,
      started_at: s.started_at,
      updated_at: s.updated_at,
    };
  }

  /** `orgId`: the organization the event concerns (null: the machine's reader, for everyone). */
  private emit(e: NfcEvent, orgId: string | null = null): void {
    this.emitter.emit('event', e, orgId);
  }

  private requirePasswords(): void {
    if (!this.deps.passwords) throw new ConflictError('Password protection needs a secret store for the tag master key, and this instance has none');
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }
}

/** What a tag of this node holds: the scan URL with `?nfc`, or for an NTAG 424 DNA with the SUN placeholders. */
export function tagUrlFor(scanUrl: string, ntag424: boolean): string {
  return ntag424 ? `${scanUrl}${SUN_URL_TEMPLATE_SUFFIX}` : nfcTagUrl(scanUrl);
}

/**
 * A tag's protection, from its write: an NTAG 424 DNA is only ever written personalised; a Type 2
 * tag has what the write turned on (an NTAG21x's mirror and password, each optional).
 */
function protectionOf(tagType: string, mirror: boolean, passwordProtected: boolean): TagProtection {
  if (tagType === NTAG424_TYPE) return 'ntag424_sun';
  if (mirror && passwordProtected) return 'ntag21x_mirror_password';
  if (mirror) return 'ntag21x_mirror';
  if (passwordProtected) return 'ntag21x_password';
  return 'none';
}

/** A URL an NTAG 424 DNA of this scan URL mirrors: `?picc=<32 hex>&cmac=<16 hex>` after it. */
function isSunUrl(url: string, scan: string): boolean {
  return url.startsWith(scan) && /^\?picc=[0-9A-Fa-f]{32}&cmac=[0-9A-Fa-f]{16}$/.test(url.slice(scan.length));
}

/** How the field screens name a node: its serial, else its label. */
function nameOf(node: Pick<NodeRow, 'serial' | 'label'>): string {
  return node.serial ?? node.label;
}

function brief(node: NodeRow): NodeBrief {
  return { slug: node.slug, serial: node.serial, label: node.label, status: node.status, hardware_id: node.hardware_id };
}
