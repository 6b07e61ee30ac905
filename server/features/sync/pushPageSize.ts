import { REMOTE_CALL_TIMEOUT_MS } from './client.ts';

/**
 * How many changes a site sends per push. The remote applies a page in one transaction at a few
 * milliseconds per change (more on a loaded central instance), so a fixed 1,000-change page could
 * outlast the call timeout: the remote would commit a page the site had given up on, and every
 * large backlog would fail its first round. The size adapts so that a page takes about a quarter of
 * the call timeout: halved after a slow page or a failed call, doubled after a quick one.
 */
export class PushPageSize {
  private size: number;
  private readonly max: number;
  private readonly min: number;
  private readonly targetMs: number;

  constructor(max: number, options: { min?: number; start?: number; targetMs?: number } = {}) {
    this.max = max;
    this.min = Math.min(options.min ?? 10, max);
    this.size = Math.max(this.min, Math.min(options.start ?? 100, max));
    this.targetMs = options.targetMs ?? REMOTE_CALL_TIMEOUT_MS / 4;
  }

  get current(): number {
    return this.size;
  }

  /** A full page was acknowledged after `ms`. */
  took(ms: number): void {
    if (ms > this.targetMs) this.shrink();
    else if (ms < this.targetMs / 4) this.size = Math.min(this.max, this.size * 2);
  }

  /** A push failed (perhaps because the page was too big to answer in time). */
  shrink(): void {
    this.size = Math.max(this.min, Math.floor(this.size / 2));
  }
}
