import type { BatchService } from './service.ts';
import type { BatchesRepo } from './repo.ts';

/**
 * Background worker that turns `generating` batches into nodes, a chunk per transaction,
 * yielding to the event loop between chunks so the API stays responsive. On start it resumes
 * whatever a crash left behind.
 */
export class BatchGenerator {
  private running = false;
  private stopped = true;
  private idle: Promise<void> = Promise.resolve();

  private readonly service: BatchService;
  private readonly batches: BatchesRepo;
  private readonly chunkSize: number;

  constructor(service: BatchService, batches: BatchesRepo, chunkSize = 50) {
    this.service = service;
    this.batches = batches;
    this.chunkSize = chunkSize;
  }

  start(): void {
    this.stopped = false;
    this.kick();
  }

  /** Asks the worker to look for work (after a create or a retry). */
  kick(): void {
    if (this.stopped || this.running) return;
    this.running = true;
    this.idle = this.loop().finally(() => {
      this.running = false;
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.idle;
  }

  private async loop(): Promise<void> {
    for (;;) {
      const ids = this.batches.generatingIds();
      if (ids.length === 0 || this.stopped) return;
      for (const id of ids) {
        let done = false;
        while (!done && !this.stopped) {
          try {
            done = this.service.generateChunk(id, this.chunkSize);
          } catch (err) {
            this.service.fail(id, err instanceof Error ? err.message : String(err));
            done = true;
          }
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    }
  }
}
