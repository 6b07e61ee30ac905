// Renders the app icon set from resources/icons/icon.svg into PNGs beside it (16…1024 px), with
// the Chromium Playwright already drives (no image library). electron-builder makes the .icns
// and .ico from the 1024 and 256 px files, and Linux takes the folder. Run after editing the SVG:
//   node scripts/render-icons.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from '@playwright/test';
import { CHROMIUM } from '../test/support/system.ts';

export const ICON_SIZES = [16, 24, 32, 48, 64, 128, 256, 512, 1024] as const;

const dir = join(import.meta.dirname, '..', 'resources', 'icons');
const svg = readFileSync(join(dir, 'icon.svg'), 'utf8');
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
try {
  for (const size of ICON_SIZES) {
    const page = await browser.newPage({ viewport: { width: size, height: size } });
    const sized = svg.replace(/width="\d+" height="\d+"/, `width="${size}" height="${size}"`);
    await page.setContent(`<html><body style="margin:0;background:transparent">${sized}</body></html>`);
    writeFileSync(join(dir, `${size}x${size}.png`), await page.screenshot({ omitBackground: true, clip: { x: 0, y: 0, width: size, height: size } }));
    await page.close();
  }
} finally {
  await browser.close();
}
