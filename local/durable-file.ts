import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeFileSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Disk writes of the local stand-ins that must survive a crash (SIGKILL, power loss) once acknowledged:
 * SQS messages, the EventBridge archive, schedules. AWS answers only after a durable write; so do we.
 */

/** Replaces `file` with `text` atomically and durably: temp file, fsync, rename, fsync of the folder. */
export const writeFileDurably = (file: string, text: string): void => {
  mkdirSync(dirname(file), { recursive: true });
  const temp = `${file}.tmp`;
  const fd = openSync(temp, 'w');
  try {
    writeFileSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
  syncFolder(dirname(file));
};

const syncFolder = (folder: string): void => {
  const fd = openSync(folder, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
};

interface Waiter {
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
}

export interface AppendLogOptions {
  /**
   * Called once the log has outgrown `compactAboveBytes`: write the state the log has built (everything
   * appended so far, durably); the log is then emptied. Without it the log only grows (an archive).
   */
  readonly compact?: () => void;
  readonly compactAboveBytes?: number;
  readonly log: (line: string) => void;
}

/**
 * An append-only file of lines with group commit: append() is synchronous and in memory; durable() resolves
 * once every line appended before the call is written and fdatasync'd. Concurrent callers share one write and
 * one fsync, so many small acknowledgements cost one disk flush (≈ 1–2 ms) instead of one each.
 */
export class AppendLog {
  private handle: FileHandle | undefined;
  private pending: string[] = [];
  private waiters: Waiter[] = [];
  private draining: Promise<void> | undefined;
  private bytes = 0;
  private closed = false;

  constructor(
    readonly file: string,
    private readonly options: AppendLogOptions,
  ) {}

  /** Opens the file for appending (creating it); `bytes` is its current size, for compaction. */
  async open(bytes = 0): Promise<void> {
    mkdirSync(dirname(this.file), { recursive: true });
    this.handle = await open(this.file, 'a');
    this.bytes = bytes;
    syncFolder(dirname(this.file));
  }

  /**
   * Adds a line. After close() the line is dropped, and said so: the owner has written its final state, and
   * e.g. a worker settling after the stop grace means a redelivery after the restart, not a loss.
   */
  append(line: string): void {
    if (this.closed) {
      this.options.log(`${this.file} is closed: dropping ${line.slice(0, 120)}`);
      return;
    }
    this.pending.push(`${line}\n`);
    this.kick();
  }

  /** Resolves when everything appended so far is on disk; rejects when the write or fsync failed. */
  durable(): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`${this.file} is closed: nothing more is written`));
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.kick();
    });
  }

  /** Writes what is pending, then closes the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    await this.durable().catch(() => {});
    this.closed = true;
    await this.handle?.close();
    this.handle = undefined;
  }

  private kick(): void {
    this.draining ??= this.drain().finally(() => {
      this.draining = undefined;
      if (this.pending.length > 0 || this.waiters.length > 0) this.kick();
    });
  }

  private async drain(): Promise<void> {
    // Let the current tick's appends join this write.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.pending.length > 0 || this.waiters.length > 0) {
      const lines = this.pending.splice(0);
      const waiters = this.waiters.splice(0);
      const text = lines.join('');
      try {
        const { compact, compactAboveBytes } = this.options;
        if (compact && compactAboveBytes !== undefined && this.bytes + text.length > compactAboveBytes) {
          // The state written by compact() already holds these lines' effects: they need not be written.
          compact();
          await this.handle?.truncate(0);
          await this.handle?.datasync();
          this.bytes = 0;
        } else {
          if (text) await this.handle?.write(text);
          this.bytes += text.length;
          if (waiters.length > 0) await this.handle?.datasync();
        }
        for (const waiter of waiters) waiter.resolve();
      } catch (error) {
        this.options.log(`cannot write ${this.file}: ${(error as Error).message}`);
        for (const waiter of waiters) waiter.reject(error as Error);
      }
    }
  }
}
