// Baseline for the NFC benchmark: nfc-pcsc used directly (no bridge, no Waymark logic). On each
// card it sends the APDUs given as hex in argv (the exact write + verify sequence Waymark sends
// for the benchmark's URL, page writes included), one after the other, checks that each answered
// 90 00, and prints the time taken as JSON. It also says when the reader is attached and when a
// card has gone, so the benchmark waits on those instead of sleeping.
import type { NFC as NFCType } from 'nfc-pcsc';

const apdus = process.argv.slice(2).map((hex) => Buffer.from(hex, 'hex'));
const { NFC } = (await import('nfc-pcsc')) as { NFC: typeof NFCType };
const nfc = new NFC();
const say = (o: object) => process.stdout.write(`${JSON.stringify(o)}\n`);
nfc.on('reader', (reader) => {
  reader.autoProcessing = false;
  reader.on('card', async () => {
    const t0 = performance.now();
    let failed = 0;
    for (const apdu of apdus) {
      const res = await reader.transmit(apdu, 64);
      if (res.length < 2 || res[res.length - 2] !== 0x90 || res[res.length - 1] !== 0x00) failed++;
    }
    say({ ms: performance.now() - t0, apdus: apdus.length, failed });
  });
  reader.on('card.off', () => say({ off: true }));
  reader.on('error', () => {});
  say({ reader: reader.name });
});
nfc.on('error', () => {});
