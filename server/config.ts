import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface AppConfig {
  /** Public address printed on tags: scan URLs are `{scanBase}/v/<slug>`. No trailing slash. */
  scanBase: string;
  /** Origin of this API as clients should reach it (used where no request is at hand, e.g. events). */
  publicUrl: string;
  /** Honour X-Forwarded-For / X-Forwarded-Proto / CF-IPCountry (only behind a proxy you run). */
  trustProxy: boolean;
  /** Where the data lives (shown in the console's About screen). */
  dataDir: string;
  version: string;
  /** Folder of the built console served at /console/ (default: out/renderer of the project). */
  consoleDir?: string | undefined;
}

/**
 * The version from the project's package.json, found by walking up from this file (it sits one
 * level up from server/ in the sources, two from out/main/ when Electron's main bundle carries it).
 */
function readVersion(): string {
  let dir = import.meta.dirname;
  for (let i = 0; i < 4; i++) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'waymark' && pkg.version) return pkg.version;
    }
    dir = dirname(dir);
  }
  return '0.0.0';
}

export const VERSION: string = readVersion();

export function makeConfig(partial: Partial<AppConfig> & Pick<AppConfig, 'scanBase'>): AppConfig {
  const scanBase = partial.scanBase.replace(/\/+$/, '');
  return {
    scanBase,
    publicUrl: (partial.publicUrl ?? scanBase).replace(/\/+$/, ''),
    trustProxy: partial.trustProxy ?? false,
    dataDir: partial.dataDir ?? '',
    version: partial.version ?? VERSION,
    consoleDir: partial.consoleDir,
  };
}
