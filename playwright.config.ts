import { defineConfig } from '@playwright/test';
import { CHROMIUM, needs } from './test/support/system.ts';

// Debian's Chromium (package `chromium`): Playwright downloads no browser here. Without it the
// specs skip with this reason (under CI: the run fails here).
needs.chromium();

export default defineConfig({
  testDir: 'test/e2e',
  testMatch: '**/*.spec.ts',
  globalSetup: './test/e2e/global-setup.ts',
  // One headless server for the run; tests create their own data and run one at a time.
  workers: 1,
  fullyParallel: false,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  retries: 0,
  reporter: process.env.CI ? [['line']] : [['list']],
  outputDir: 'test-results',
  use: {
    viewport: { width: 1280, height: 860 },
    acceptDownloads: true,
    actionTimeout: 10_000,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    },
  },
});
