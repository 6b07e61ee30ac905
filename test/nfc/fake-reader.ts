/**
 * An in-process NfcDevice over VirtualTag: the same tag logic (program.ts) without PC/SC, so the
 * NFC domain (sessions, binding, refusals, resume) is tested on machines without pcscd too.
 */
import { EventEmitter } from 'node:events';
import type { BridgeStatus, NfcDevice, WriteRequest } from '../../server/features/nfc/bridge.ts';
import { inspectTag, NfcError, verifyUriOnTag, writeUriToTag, type TagSnapshot, type Transmit, type WriteOutcome } from '../../server/features/nfc/program.ts';
import type { VirtualTag } from './virtual-tag.ts';

const READER = 'Fake reader';

export class FakeReader extends EventEmitter implements NfcDevice {
  private tag: VirtualTag | null = null;
  private snapshot: TagSnapshot | null = null;

  private tx(tag: VirtualTag): Transmit {
    return async (apdu) => {
      const r = tag.apdu(apdu);
      if (!r) {
        this.tag = null;
        this.snapshot = null;
        throw new Error('tag left the field');
      }
      return r;
    };
  }

  status(): BridgeStatus {
    return {
      state: this.tag ? 'card_present' : 'ready',
      message: this.tag ? 'Tag on the reader.' : 'Reader ready: place a tag.',
      fix: null,
      readers: [READER],
      cards: this.tag && this.snapshot ? [{ reader: READER, info: this.snapshot.info }] : [],
      generation: 1,
    };
  }

  /** Put a tag on the reader: inspected, then a `card` event (like the bridge). */
  async present(tag: VirtualTag): Promise<void> {
    this.tag = tag;
    tag.powerOn(); // a new presentation: the counter and the authentication start over
    this.snapshot = await inspectTag(this.tx(tag), tag.atr);
    this.emit('card', { reader: READER, info: this.snapshot.info });
    this.emit('status', this.status());
  }

  remove(): void {
    const uid = this.snapshot?.info.uid ?? null;
    this.tag = null;
    this.snapshot = null;
    this.emit('card.off', { reader: READER, uid });
    this.emit('status', this.status());
  }

  async write(request: WriteRequest): Promise<WriteOutcome> {
    if (!this.tag || !this.snapshot) throw new NfcError('no_tag', 'No tag on the reader: place a tag.');
    if (request.expectUid && request.expectUid !== this.snapshot.info.uid) throw new NfcError('busy', 'A different tag is on the reader now.');
    if (request.verifyOnly) return verifyUriOnTag(this.tx(this.tag), this.snapshot, request.url);
    return writeUriToTag(this.tx(this.tag), this.snapshot, request.url, { ...request, lock: request.lock === true });
  }

  feedback(): void {}
}
