import { fstatSync, writeSync } from 'node:fs';

/**
 * Keeps the server running when its stdout/stderr cannot be written. Node writes to a file
 * synchronously and turns a failed write (ENOSPC on a full disk) into an 'error' on the stream,
 * which nobody handles: the process died about 200 ms after the first SQLITE_FULL when its log
 * was on the full volume. For a file, each write is tried on its own and a failed one dropped
 * (counted, and said in one line once writing works again); for a pipe or terminal, an error
 * (EPIPE: the reader went away) is ignored.
 */
export function keepRunningWhenOutputFails(): void {
  // Shared: stdout and stderr usually go to the same log, and the next line that gets through,
  // on either, says how many were lost.
  let dropped = 0;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', () => {});
    const fd = (stream as { fd?: number }).fd;
    if (fd === undefined || !isFile(fd)) continue;
    stream._write = (chunk: Buffer | string, encoding: BufferEncoding, done: (err?: Error | null) => void) => {
      try {
        if (dropped > 0) {
          writeSync(fd, `(${dropped} log writes were lost: the log's volume was full or failing)\n`);
          dropped = 0;
        }
        writeSync(fd, typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk);
      } catch {
        dropped++;
      }
      done();
    };
  }
}

function isFile(fd: number): boolean {
  try {
    return fstatSync(fd).isFile();
  } catch {
    return false;
  }
}
