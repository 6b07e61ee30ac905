// Shared helpers for the NFC suites.
import type { BridgeStatus, NfcDevice } from '../../server/features/nfc/bridge.ts';
import { NfcError } from '../../server/features/nfc/program.ts';
import type { CardOnReader } from '../../server/features/nfc/protocol.ts';

export function waitForStatus(bridge: NfcDevice, pred: (s: BridgeStatus) => boolean, ms = 30_000): Promise<BridgeStatus> {
  return new Promise((resolve, reject) => {
    if (pred(bridge.status())) return resolve(bridge.status());
    const timer = setTimeout(() => {
      bridge.off('status', on);
      reject(new Error(`timed out waiting for bridge status; last: ${JSON.stringify(bridge.status())}`));
    }, ms);
    const on = (s: BridgeStatus) => {
      if (pred(s)) {
        clearTimeout(timer);
        bridge.off('status', on);
        resolve(s);
      }
    };
    bridge.on('status', on);
  });
}

export function cardOff(bridge: NfcDevice, ms = 20_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no card.off event')), ms);
    bridge.once('card.off', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export function nextCard(bridge: NfcDevice, ms = 20_000): Promise<CardOnReader> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no card event')), ms);
    bridge.once('card', (c: CardOnReader) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
}

export async function errorCode(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return err instanceof NfcError ? err.code : String(err);
  }
}

