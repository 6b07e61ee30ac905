/**
 * The PC/SC side of the NFC bridge, in its own process (started by bridge.ts: a Node fork, or an
 * Electron utilityProcess in the desktop app). nfc-pcsc and its
 * native addon live only here: a spinning, crashing or hung PC/SC stack cannot stall the API
 * server; the parent's watchdog kills and restarts this process.
 *
 * Recovery strategy: probe pcscd's socket before creating nfc-pcsc (with no daemon, nfc-pcsc
 * spins at 100% CPU), keep probing while running, and exit when the daemon goes away or PC/SC
 * reports an error: a fresh process gets a fresh native state.
 */
import { statSync } from 'node:fs';
import net from 'node:net';
import type { NFC as NFCType, Reader } from 'nfc-pcsc';
import { advice, type ReaderAdvice } from './advice.ts';
import { ntag424Messages, personaliseNtag424 } from './ntag424-program.ts';
import { inspectTag, NfcError, takeInspectApdus, verifyUriOnTag, writeUriToTag, type TagSnapshot, type Transmit, type WriteOutcome } from './program.ts';
import { EXIT_UNAVAILABLE, type FromChild, type ReaderState, type ToChild } from './protocol.ts';

/** Electron's utilityProcess talks over process.parentPort; a Node fork over process.send. */
interface ParentPort {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (event: { data: unknown }) => void): void;
}
const parentPort = (process as NodeJS.Process & { parentPort?: ParentPort }).parentPort;

function post(msg: FromChild): void {
  if (parentPort) parentPort.postMessage(msg);
  else process.send?.(msg);
}

function onParentMessage(listener: (msg: ToChild) => void): void {
  if (parentPort) parentPort.on('message', (event) => listener(event.data as ToChild));
  else process.on('message', (raw) => listener(raw as ToChild));
}

const socketPath = process.env.PCSCLITE_CSOCK_NAME || '/run/pcscd/pcscd.comm';

function probeDaemon(): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(socketPath);
    const done = (up: boolean) => {
      s.destroy();
      resolve(up);
    };
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
    s.setTimeout(1000, () => done(false));
  });
}

interface ReaderEntry {
  reader: Reader;
  snapshot: TagSnapshot | null;
  atr: Buffer | null;
  /** Serialises inspection and writes on this reader. */
  queue: Promise<unknown>;
}

const readers = new Map<string, ReaderEntry>();
let state: ReaderState = 'starting';
let stateMessage = '';

function setState(next: ReaderState, said: ReaderAdvice): void {
  state = next;
  stateMessage = said.message;
  post({ type: 'state', state, message: said.message, fix: said.fix, readers: [...readers.keys()] });
}

function refreshState(): void {
  if (readers.size === 0) setState('no_reader', advice.noReader);
  else if ([...readers.values()].some((r) => r.atr)) setState('card_present', advice.cardPresent);
  else setState('ready', advice.ready);
}

function enqueue<T>(entry: ReaderEntry, job: () => Promise<T>): Promise<T> {
  const next = entry.queue.then(job, job);
  entry.queue = next.catch(() => undefined);
  return next;
}

function transmitFor(reader: Reader): Transmit {
  return (apdu, max) => reader.transmit(apdu, max);
}

/** Readers whose LED/buzzer control failed once (e.g. over vpcd): not tried again. */
const noLed = new Set<string>();

async function feedback(entry: ReaderEntry, ok: boolean): Promise<void> {
  const r = entry.reader as Reader & { led?: (led: number, blinking: number[]) => Promise<void> };
  if (typeof r.led !== 'function' || noLed.has(r.name)) return;
  try {
    // ACR122: green blink + short beep on success, red blinks + beeps on failure.
    if (ok) await r.led(0b00101110, [0x01, 0x01, 0x01, 0x01]);
    else await r.led(0b01011101, [0x02, 0x01, 0x03, 0x01]);
  } catch (err) {
    noLed.add(r.name);
    post({ type: 'log', message: `reader LED/buzzer control failed on ${r.name} (not tried again): ${(err as Error).message}` });
  }
}

function attachReader(reader: Reader): void {
  reader.autoProcessing = false;
  const entry: ReaderEntry = { reader, snapshot: null, atr: null, queue: Promise.resolve() };
  readers.set(reader.name, entry);
  reader.on('card', (card) => {
    const atr = card.atr ?? Buffer.alloc(0);
    entry.atr = atr;
    entry.snapshot = null;
    void enqueue(entry, async () => {
      try {
        const snapshot = await inspectTag(transmitFor(reader), atr);
        if (entry.atr !== atr) return; // removed meanwhile
        entry.snapshot = snapshot;
        post({ type: 'card', card: { reader: reader.name, info: snapshot.info } });
      } catch (err) {
        post({ type: 'log', message: `inspecting the tag failed: ${(err as Error).message}` });
      }
      refreshState();
    });
    refreshState();
  });
  reader.on('card.off', () => {
    const uid = entry.snapshot?.info.uid ?? null;
    entry.atr = null;
    entry.snapshot = null;
    post({ type: 'card.off', reader: reader.name, uid });
    refreshState();
  });
  reader.on('error', (err) => post({ type: 'log', message: `reader ${reader.name}: ${err.message}` }));
  reader.on('end', () => {
    readers.delete(reader.name);
    refreshState();
    // A reader gone (unplugged, or pcscd going away): start over in a fresh process, whose
    // PC/SC context sees exactly the readers there are now.
    post({ type: 'log', message: `reader removed: ${reader.name}` });
    setTimeout(() => process.exit(4), 20);
  });
  refreshState();
}

async function handleWrite(msg: Extract<ToChild, { type: 'write' }>): Promise<void> {
  const fail = (code: NfcError['code'], message: string) => post({ type: 'result', id: msg.id, ok: false, error: { code, message } });
  if (state === 'no_daemon' || state === 'starting') return fail('no_daemon', stateMessage || advice.noDaemon.message);
  if (readers.size === 0) return fail('no_reader', advice.noReader.message);
  const entry = msg.reader ? readers.get(msg.reader) : [...readers.values()].find((r) => r.atr);
  if (!entry || !entry.atr) return fail('no_tag', 'No tag on the reader: place a tag.');
  try {
    const outcome = await enqueue(entry, async () => {
      if (!entry.snapshot) throw new NfcError('no_tag', 'No tag on the reader: place a tag.');
      if (msg.expectUid && entry.snapshot.info.uid !== msg.expectUid) {
        throw new NfcError('busy', 'A different tag is on the reader now: present the tag again.');
      }
      try {
        const tx = transmitFor(entry.reader);
        if (entry.snapshot.ntag424) return await personalise(tx, entry.snapshot, msg);
        return msg.verifyOnly ? await verifyUriOnTag(tx, entry.snapshot, msg.url) : await writeUriToTag(tx, entry.snapshot, msg.url, { lock: msg.lock, mirror: msg.mirror, protect: msg.protect, password: msg.password, newPassword: msg.newPassword, configured: msg.configured });
      } catch (err) {
        // After a failed write what we know of the tag is stale: inspect again on the next presentation.
        if (err instanceof NfcError && err.code === 'tag_removed') entry.snapshot = null;
        throw err;
      }
    });
    post({ type: 'result', id: msg.id, ok: true, outcome });
    void feedback(entry, true);
  } catch (err) {
    const e = err instanceof NfcError ? err : new NfcError('io_error', (err as Error).message);
    // Failure feedback (LED/buzzer) comes from the parent, which also refuses tags before writing.
    post({ type: 'result', id: msg.id, ok: false, error: { code: e.code, message: e.message } });
  }
}

/** An NTAG 424 DNA: personalised (or only verified, when already done) with the keys the parent sent. */
async function personalise(tx: Transmit, snapshot: TagSnapshot, msg: Extract<ToChild, { type: 'write' }>): Promise<WriteOutcome> {
  if (!msg.ntag424) throw new NfcError('no_master_key', ntag424Messages.noKeys);
  const uid = Buffer.from(snapshot.info.uid.replace(/:/g, ''), 'hex');
  const fromHex = (k: { keys: string[]; version: number }) => ({ keys: k.keys.map((key) => Buffer.from(key, 'hex')), version: k.version });
  const keys = fromHex(msg.ntag424);
  const previous = msg.ntag424.previous ? fromHex(msg.ntag424.previous) : undefined;
  const { outcome, state } = await personaliseNtag424(tx, snapshot.ntag424!, uid, msg.url, keys, previous);
  snapshot.ntag424 = state;
  snapshot.info.ntag424 = { sdm: true, keyVersion: keys.version };
  return { ...outcome, uid: snapshot.info.uid, inspectApdus: takeInspectApdus(snapshot) };
}

onParentMessage((msg) => {
  if (msg.type === 'write') void handleWrite(msg);
  else if (msg.type === 'feedback') {
    const entry = readers.get(msg.reader);
    if (entry) void feedback(entry, msg.ok);
  } else if (msg.type === 'shutdown') process.exit(0);
});
// A utility process ends with the app; a forked one when its parent's channel closes.
process.on('disconnect', () => process.exit(0));

setInterval(() => post({ type: 'heartbeat' }), 500);

let NFC: typeof NFCType;
try {
  // WAYMARK_NFC_PCSC_MODULE: tests point it at a missing module to check the "not installed" path.
  const moduleName = process.env.WAYMARK_NFC_PCSC_MODULE || 'nfc-pcsc';
  ({ NFC } = (await import(moduleName)) as { NFC: typeof NFCType });
} catch (err) {
  const e = err as Error & { code?: string };
  const missing = e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'MODULE_NOT_FOUND';
  // The raw error (module names, node_modules paths) is for the server log; screens get advice.
  post({
    type: 'log',
    message: missing
      ? `nfc-pcsc is not installed (${e.message.split('\n')[0]}): NFC unavailable`
      : `nfc-pcsc cannot load (${e.message.split('\n')[0]}): NFC unavailable; rebuild it for this Node (npm rebuild @pokusew/pcsclite)`,
  });
  setState('unavailable', missing ? advice.notInstalled : advice.cannotLoad);
  setTimeout(() => process.exit(EXIT_UNAVAILABLE), 50);
  await new Promise(() => {});
}

while (!(await probeDaemon())) {
  if ((state as ReaderState) !== 'no_daemon') setState('no_daemon', advice.noDaemon);
  await new Promise((r) => setTimeout(r, 1000));
}

/** The socket file's identity: a pcscd restarted between two probes made a new socket file. */
function socketInode(): string | null {
  try {
    const st = statSync(socketPath, { bigint: true });
    return `${st.ino}:${st.ctimeNs}:${st.birthtimeNs}`;
  } catch {
    return null;
  }
}
const daemonSocket = socketInode();

const nfc = new NFC!();
nfc.on('reader', (reader) => attachReader(reader));
nfc.on('error', (err) => {
  post({ type: 'log', message: `PC/SC error: ${err.message}` });
  process.exit(4);
});
refreshState();

// The daemon going away leaves nfc-pcsc unusable: exit and let the parent start a fresh child.
setInterval(() => {
  void probeDaemon().then((up) => {
    if (!up) {
      setState('no_daemon', advice.daemonStopped);
      setTimeout(() => process.exit(4), 20);
    } else if (socketInode() !== daemonSocket) {
      post({ type: 'log', message: 'PC/SC daemon restarted: reconnecting.' });
      setState('starting', advice.daemonRestarted);
      setTimeout(() => process.exit(4), 20);
    }
  });
}, 1000);
