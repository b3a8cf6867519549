import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AppendLog, writeFileDurably } from '../durable-file';
import type { QueueChange, StoredMessage } from './queue';

/**
 * The durable state of the local SQS queues: a snapshot (`sqs-messages.json`) plus a journal of the changes
 * since (`sqs-journal.ndjson`, one JSON line per change). A send is acknowledged only once its journal line is
 * fsync'd; receives (with until when they hide the message), visibility changes and deletes are written with
 * the next flush (losing one on a crash means a redelivery, which standard SQS allows); Lambda's pollers wait for
 * that flush before they invoke with what they received, so that a message in flight at a crash stays hidden
 * after the restart as long as its receive said, as on SQS. When the journal outgrows COMPACT_ABOVE_BYTES the
 * current state becomes the new snapshot and the journal starts empty. Every line sets an absolute state, so
 * replaying one twice is harmless.
 */

const SNAPSHOT_FILE = 'sqs-messages.json';
export const JOURNAL_FILE = 'sqs-journal.ndjson';
/** Replaying 16 MiB of journal at start takes well under a second; compaction rewrites the snapshot. */
const COMPACT_ABOVE_BYTES = 16 * 1024 * 1024;

interface Snapshot {
  readonly queues: Record<string, StoredMessage[]>;
}

type JournalLine = QueueChange & { readonly q: string };

export type QueueContents = Map<string, Map<string, StoredMessage>>;

export class SqsJournal {
  private readonly snapshotFile: string;
  private readonly appendLog: AppendLog;

  constructor(
    dataDir: string,
    /** The queues' current contents, for a new snapshot. */
    private readonly state: () => Record<string, StoredMessage[]>,
    private readonly log: (line: string) => void,
  ) {
    this.snapshotFile = join(dataDir, SNAPSHOT_FILE);
    this.appendLog = new AppendLog(join(dataDir, JOURNAL_FILE), {
      compact: () => this.writeSnapshot(),
      compactAboveBytes: COMPACT_ABOVE_BYTES,
      log,
    });
  }

  /** The stored messages per queue: the snapshot with the journal replayed over it. */
  load(): QueueContents {
    const contents: QueueContents = new Map();
    const queue = (name: string) => {
      let messages = contents.get(name);
      if (!messages) {
        messages = new Map();
        contents.set(name, messages);
      }
      return messages;
    };
    const snapshot = readIfExists(this.snapshotFile);
    if (snapshot !== undefined) {
      let parsed: Snapshot;
      try {
        parsed = JSON.parse(snapshot) as Snapshot;
      } catch (error) {
        throw new Error(`Cannot read ${this.snapshotFile}: ${(error as Error).message}`);
      }
      for (const [name, messages] of Object.entries(parsed.queues)) {
        for (const message of messages) queue(name).set(message.id, message);
      }
    }
    const lines = (readIfExists(this.appendLog.file) ?? '').split('\n');
    for (const [index, text] of lines.entries()) {
      if (text.trim() === '') continue;
      let line: JournalLine;
      try {
        line = JSON.parse(text) as JournalLine;
      } catch {
        // Only the last line can be torn by a crash, and it was never acknowledged.
        if (index < lines.length - 1) this.log(`skipping an unreadable line ${index + 1} of ${JOURNAL_FILE}`);
        continue;
      }
      apply(queue(line.q), line);
    }
    return contents;
  }

  /** Writes the loaded state as the new snapshot, empties the journal, and opens it for appending. */
  async open(): Promise<void> {
    this.writeSnapshot();
    writeFileDurably(this.appendLog.file, '');
    await this.appendLog.open(statSync(this.appendLog.file).size);
  }

  record(queueName: string, change: QueueChange): void {
    this.appendLog.append(JSON.stringify({ q: queueName, ...change }));
  }

  /** Resolves once every change recorded so far is on disk. */
  durable(): Promise<void> {
    return this.appendLog.durable();
  }

  /** Flushes the journal, then folds it into a final snapshot. */
  async close(): Promise<void> {
    await this.appendLog.close();
    this.writeSnapshot();
    writeFileDurably(this.appendLog.file, '');
  }

  private writeSnapshot(): void {
    const snapshot: Snapshot = { queues: this.state() };
    writeFileDurably(this.snapshotFile, JSON.stringify(snapshot));
  }
}

const apply = (messages: Map<string, StoredMessage>, line: JournalLine): void => {
  if ('put' in line) messages.set(line.put.id, line.put);
  else if ('received' in line) {
    const message = messages.get(line.received);
    if (message) {
      message.receiveCount = line.receiveCount;
      if (line.copiesReceived !== undefined) message.copiesReceived = line.copiesReceived;
      message.firstReceivedAt ??= line.firstReceivedAt;
      if (line.visibleAt !== undefined) message.visibleAt = line.visibleAt;
    }
  } else if ('hidden' in line) {
    const message = messages.get(line.hidden);
    if (message) message.visibleAt = line.visibleAt;
  } else if ('deleted' in line) messages.delete(line.deleted);
  else if ('purged' in line) messages.clear();
};

const readIfExists = (file: string): string | undefined => {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`Cannot read ${file}: ${(error as Error).message}`);
  }
};
