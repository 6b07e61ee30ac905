/**
 * Benchmark: a 500-label PDF (issue 7 aims for under 2 s), printed beside a baseline measured in
 * the same run: the same 500 QR matrices computed with no PDF at all. The difference is what the
 * PDF (vector paths, caption font subset, compression) costs.
 *
 *   node test/bench/print.ts            (or from test/bench/run.ts: import { benchPrint })
 *
 * Also times the real HTTP route (GET /v1/batches/{id}/manifest?format=pdf) on a real server.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { defaultResourcesDir, loadLayouts } from '../../server/features/printing/layouts.ts';
import { type PdfJob, labelGeometry, labelsPdfBuffer } from '../../server/features/printing/pdf.ts';
import { fitQr, printableUrl } from '../../server/features/printing/qr.ts';
import { ManualClock } from '../../server/platform/clock.ts';
import { startTestServer } from '../support/server.ts';

const N = 500;
const RUNS = 5;
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

function urls(n: number): string[] {
  let x = 0x9e3779b9;
  return Array.from({ length: n }, () => {
    let slug = '';
    for (let k = 0; k < 8; k++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      slug += CROCKFORD[(x >>> 0) % 32];
    }
    return printableUrl(`https://scan.waymark.example/v/${slug}`);
  });
}

async function median(runs: number, f: () => unknown): Promise<number> {
  await f(); // warm-up (JIT, font parsing)
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await f();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

const ms = (v: number) => `${v.toFixed(0).padStart(6)} ms`;

export async function benchPrint(): Promise<void> {
  const resources = defaultResourcesDir();
  const layouts = loadLayouts(join(resources, 'layouts'));
  const font = readFileSync(join(resources, 'fonts', 'DejaVuSansMono.ttf'));
  const texts = urls(N);
  console.log(`\nprinting: ${N} labels, median of ${RUNS} runs (URL like ${texts[0]})`);
  let slowest = 0;

  for (const layout of layouts.filter((l) => ['avery-l7160', 'avery-5160', 'roll-25x25'].includes(l.id))) {
    const side = labelGeometry(layout, true).side;
    const baseline = await median(RUNS, () => texts.map((t) => fitQr(t, side)));
    const job: PdfJob = {
      layout,
      items: texts.map((text, i) => ({ text, caption: `WM-${String(i + 1).padStart(3, '0')}` })),
      captions: true,
      cutMarks: true,
      offsetX: 0,
      offsetY: 0,
      start: 0,
      title: 'bench',
      createdAt: new Date(0),
      font,
    };
    let size = 0;
    const pdf = await median(RUNS, async () => {
      size = (await labelsPdfBuffer(job)).length;
    });
    slowest = Math.max(slowest, pdf);
    console.log(
      `  ${layout.id.padEnd(12)} baseline (500 QR matrices, no PDF) ${ms(baseline)} | PDF ${ms(pdf)} (${(pdf / baseline).toFixed(1)}× baseline) | ${(size / 1024).toFixed(0)} KiB`,
    );
  }

  // End to end: the real route on a real server with a real SQLite file.
  const clock = new ManualClock();
  const server = await startTestServer({ clock, scanBase: 'https://w.example.com' }); // labels print only on a scan domain phones can reach
  try {
    const created = await server.api('POST', '/batches', { label: 'bench', prefix: 'BENCH', quantity: N, function_type: 'redirect', base_payload: { url: 'https://example.com' } });
    const id = created.body.data.id as string;
    for (;;) {
      clock.advance(1000);
      const b = await server.api('GET', `/batches/${id}`);
      if (b.body.data.status === 'ready') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const get = async (path: string) => {
      clock.advance(1000);
      const res = await fetch(`${server.url}/v1${path}`, { headers: { authorization: `Bearer ${server.apiKey}` } });
      return Buffer.from(await res.arrayBuffer()).length;
    };
    let jsonSize = 0;
    let pdfSize = 0;
    const json = await median(RUNS, async () => (jsonSize = await get(`/batches/${id}/manifest`)));
    const pdf = await median(RUNS, async () => (pdfSize = await get(`/batches/${id}/manifest?format=pdf&layout=avery-l7160`)));
    slowest = Math.max(slowest, pdf);
    console.log(
      `  HTTP         baseline (JSON manifest, same batch)      ${ms(json)} (${(jsonSize / 1024).toFixed(0)} KiB) | PDF ${ms(pdf)} (${(pdf / json).toFixed(1)}× baseline) | ${(pdfSize / 1024).toFixed(0)} KiB`,
    );
  } finally {
    await server.close();
  }
  console.log(`  slowest 500-label PDF ${slowest.toFixed(0)} ms: target (under 2 s) ${slowest < 2000 ? 'met' : 'NOT met'}`);
}

if (process.argv[1] && resolve(process.argv[1]) === import.meta.filename) {
  await benchPrint();
}
