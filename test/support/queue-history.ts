import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { JOURNAL_FILE, SqsJournal } from '../../local/sqs/journal';
import type { QueueChange, StoredMessage } from '../../local/sqs/queue';

/**
 * The life of every message of a `--data` runtime's SQS stand-in across kills and restarts, read from its
 * files: each start folds the journal (`sqs-journal.ndjson`) into a new snapshot and empties it, so `keep()`
 * copies the journal after each kill, before the restart. For failure messages of crash tests: which queues a
 * message went through (a DLQ), how often it was received, whether it was deleted, where it is now.
 */

export interface MessageLife {
  readonly id: string;
  readonly body: string;
  /** The queues it was put in, in order (a redrive puts it in the DLQ under the same id). */
  readonly queues: string[];
  /** The highest receive count recorded, and how many receives were recorded. */
  maxReceiveCount: number;
  receives: number;
  /** The runtime's life (1: until the first kill) of each recorded receive. */
  readonly receivedInLives: number[];
  /** The queues it was deleted from (a delete, or a move to the DLQ). */
  readonly deletedFrom: string[];
  /** Where it is now, and how many seconds until it is visible (≤ 0: visible). */
  now?: { readonly queue: string; readonly visibleInSecs: number; readonly receiveCount: number };
}

type JournalLine = QueueChange & { readonly q: string };

const readLines = (file: string, apply: (line: JournalLine) => void) => {
  if (!existsSync(file)) return;
  for (const text of readFileSync(file, 'utf8').split('\n')) {
    if (text.trim() === '') continue;
    let line: JournalLine;
    try {
      line = JSON.parse(text) as JournalLine;
    } catch {
      continue; // the torn last line of a kill
    }
    apply(line);
  }
};

export class QueueHistory {
  private kept = 0;

  constructor(
    private readonly dataDir: string,
    private readonly archiveDir: string,
  ) {
    mkdirSync(archiveDir, { recursive: true });
  }

  /** After a kill, before the restart: keeps the journal the restart will fold into its snapshot. */
  keep(): void {
    const journal = join(this.dataDir, JOURNAL_FILE);
    if (!existsSync(journal)) return;
    this.kept += 1;
    copyFileSync(journal, join(this.archiveDir, `${String(this.kept).padStart(3, '0')}.ndjson`));
  }

  /** Every message seen, by id: its history from the kept journals and the running one, then where it is now. */
  lives(): Map<string, MessageLife> {
    const lives = new Map<string, MessageLife>();
    const lifeOf = (message: Pick<StoredMessage, 'id' | 'body'>) => {
      let life = lives.get(message.id);
      if (!life) {
        life = {
          id: message.id,
          body: message.body,
          queues: [],
          maxReceiveCount: 0,
          receives: 0,
          receivedInLives: [],
          deletedFrom: [],
        };
        lives.set(message.id, life);
      }
      return life;
    };
    let lifeNumber = 1;
    const apply = (line: JournalLine) => {
      if ('put' in line) {
        const life = lifeOf(line.put);
        if (life.queues.at(-1) !== line.q) life.queues.push(line.q);
      } else if ('received' in line) {
        const life = lives.get(line.received);
        if (!life) return;
        life.receives += 1;
        life.receivedInLives.push(lifeNumber);
        life.maxReceiveCount = Math.max(life.maxReceiveCount, line.receiveCount);
      } else if ('deleted' in line) lives.get(line.deleted)?.deletedFrom.push(line.q);
    };
    for (const file of readdirSync(this.archiveDir).sort()) {
      readLines(join(this.archiveDir, file), apply);
      lifeNumber += 1;
    }
    readLines(join(this.dataDir, JOURNAL_FILE), apply);
    // Where each message is now: the stand-in's own reading of its snapshot and journal.
    const now = Date.now();
    const current = new SqsJournal(
      this.dataDir,
      () => ({}),
      () => {},
    ).load();
    for (const [queue, messages] of current) {
      for (const message of messages.values()) {
        const life = lifeOf(message);
        if (!life.queues.includes(queue)) life.queues.push(queue);
        life.maxReceiveCount = Math.max(life.maxReceiveCount, message.receiveCount);
        life.now = {
          queue,
          visibleInSecs: Math.round((message.visibleAt - now) / 100) / 10,
          receiveCount: message.receiveCount,
        };
      }
    }
    return lives;
  }
}

/** The messages in a dead-letter queue now (`<queue>-dlq`, or a function's on-failure queue). */
export const deadLettered = (lives: Map<string, MessageLife>): MessageLife[] =>
  [...lives.values()].filter((life) => life.now?.queue.endsWith('-dlq'));

/** One line per message: its queues, receives, deletes, where it is now, and the start of its body. */
export const describeLife = (life: MessageLife): string =>
  `${life.id} via ${life.queues.join(' → ')}: ${life.receives} receive(s) recorded (in lives ` +
  `${life.receivedInLives.join(',')}), max count ${life.maxReceiveCount}` +
  `${life.deletedFrom.length > 0 ? `, deleted from ${life.deletedFrom.join(', ')}` : ''}` +
  `${life.now ? `; now in ${life.now.queue} (count ${life.now.receiveCount}, visible in ${life.now.visibleInSecs} s)` : '; gone'}` +
  `: ${life.body.slice(0, 160)}`;
