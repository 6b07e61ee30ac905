// Baseline for the NFC benchmark: nfc-pcsc used directly (no bridge, no Waymark logic). On each
// card it sends `count` READ BINARY APDUs one after the other and prints the time taken as JSON.
import type { NFC as NFCType } from 'nfc-pcsc';

const count = Number(process.argv[2] ?? '15');
const { NFC } = (await import('nfc-pcsc')) as { NFC: typeof NFCType };
const nfc = new NFC();
nfc.on('reader', (reader) => {
  reader.autoProcessing = false;
  reader.on('card', async () => {
    const t0 = performance.now();
    for (let i = 0; i < count; i++) await reader.transmit(Buffer.from([0xff, 0xb0, 0x00, 0x04, 0x10]), 18);
    process.stdout.write(`${JSON.stringify({ ms: performance.now() - t0, apdus: count })}\n`);
  });
  reader.on('error', () => {});
});
nfc.on('error', () => {});
