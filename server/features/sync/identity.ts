import { closeSync, fsyncSync, openSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Executor } from '../../db/store.ts';
import type { SyncRepo } from './repo.ts';
import { KEYS, type SiteSync } from './site.ts';

export const MARKER_FILE = 'waymark.instance';

interface Marker {
  site_id: string;
  incarnation: string;
  epoch: number;
}

interface Recorded {
  file_id: string | null;
  epoch: number;
}

/**
 * Detects a data directory that is not the one this instance last ran on: a database restored
 * from a backup, or a data directory / disk copied to another place. Such a copy must not mint
 * from the blocks it holds (the original may still mint from them), so it gets a new incarnation.
 *
 * Two witnesses, checked at every start (docs/sync.md, "Incarnations"):
 * - the database file's identity (its inode): a copied or restored file is a new file;
 * - an epoch counter kept both in the database and in the marker file `waymark.instance` next to
 *   it, bumped at every start and clean stop: a database restored in place (same inode) is older
 *   than the marker, and a database without its marker was copied without it.
 * A bit-for-bit disk image or a VM snapshot fools both; the remote's fencing token catches that
 * copy at its next call (SiteSync, LeaseRegistry.fence).
 */
export class InstanceIdentity {
  private readonly dataDir: string;
  private readonly dbFile: string;
  private readonly db: Executor;
  private readonly repo: SyncRepo;
  private readonly site: SiteSync;

  constructor(dataDir: string, dbFile: string, db: Executor, repo: SyncRepo, site: SiteSync) {
    this.dataDir = dataDir;
    this.dbFile = dbFile;
    this.db = db;
    this.repo = repo;
    this.site = site;
  }

  get markerPath(): string {
    return join(this.dataDir, MARKER_FILE);
  }

  /** Run once at start, before anything mints. Returns why a new incarnation was started, if it was. */
  async check(): Promise<string | null> {
    const fileId = this.fileId();
    const raw = await this.repo.getSetting(this.db, KEYS.instance);
    const recorded = raw ? (JSON.parse(raw) as Recorded) : null;
    const marker = this.readMarker();
    let reason: string | null = null;
    if (recorded) {
      if (recorded.file_id !== null && fileId !== null && recorded.file_id !== fileId) {
        reason = 'the database file is a copy (restored backup or copied data directory)';
      } else if (!marker) {
        reason = `the marker file ${MARKER_FILE} is missing (database copied without it)`;
      } else if (marker.site_id !== this.site.siteId || marker.incarnation !== this.site.incarnation) {
        reason = `the marker file ${MARKER_FILE} belongs to another database`;
      } else if (recorded.epoch < marker.epoch) {
        reason = 'the database is older than its marker file (restored from a backup)';
      }
    }
    if (reason) await this.site.startNewIncarnation(reason);
    await this.seal(Math.max(recorded?.epoch ?? 0, marker?.epoch ?? 0) + 1, fileId);
    return reason;
  }

  /** Bumps the epoch (at a clean stop), so a backup taken while running is recognised if restored. */
  async close(): Promise<void> {
    const raw = await this.repo.getSetting(this.db, KEYS.instance);
    const recorded = raw ? (JSON.parse(raw) as Recorded) : null;
    await this.seal((recorded?.epoch ?? 0) + 1, this.fileId());
  }

  /** Database first, then the marker: a crash in between leaves the database ahead, which passes. */
  private async seal(epoch: number, fileId: string | null): Promise<void> {
    await this.site.setSetting(this.db, KEYS.instance, JSON.stringify({ file_id: fileId, epoch } satisfies Recorded));
    const marker: Marker = { site_id: this.site.siteId, incarnation: this.site.incarnation, epoch };
    const tmp = `${this.markerPath}.tmp`;
    const fd = openSync(tmp, 'w');
    try {
      writeSync(fd, `${JSON.stringify(marker)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.markerPath);
  }

  private readMarker(): Marker | null {
    try {
      const parsed = JSON.parse(readFileSync(this.markerPath, 'utf8')) as Partial<Marker>;
      if (typeof parsed.site_id !== 'string' || typeof parsed.incarnation !== 'string' || typeof parsed.epoch !== 'number') return null;
      return parsed as Marker;
    } catch {
      return null;
    }
  }

  /** The inode of the database file ("0" on file systems without inode numbers: not used). */
  private fileId(): string | null {
    try {
      const ino = statSync(this.dbFile, { bigint: true }).ino;
      return ino === 0n ? null : ino.toString();
    } catch {
      return null;
    }
  }
}
