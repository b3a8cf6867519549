import { Duration } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { type QueueSpec, SQS_MAX_MESSAGE_BYTES } from '../wiring';
import { pascalCase } from './naming';

export interface ServiceQueue {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly spec: QueueSpec;
}

/** The SQS queues of the declaration, each with its own dead-letter queue; SSE on, TLS enforced. */
export class Queues extends Construct {
  private readonly byId = new Map<string, ServiceQueue>();

  constructor(scope: Construct, id: string, props: { readonly specs: readonly QueueSpec[] }) {
    super(scope, id);
    for (const spec of props.specs) {
      if (this.byId.has(spec.id)) throw new Error(`lib/wiring: queue "${spec.id}" is declared twice`);
      const name = pascalCase(spec.id);
      const deadLetterQueue = new sqs.Queue(this, `${name}Dlq`, {
        // The longest SQS allows: time to notice, fix and redrive.
        retentionPeriod: Duration.days(14),
        // Set explicitly so the stack does not depend on the account's default (lib/wiring/limits.ts).
        maxMessageSizeBytes: SQS_MAX_MESSAGE_BYTES,
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
      });
      const queue = new sqs.Queue(this, name, {
        visibilityTimeout: Duration.seconds(spec.visibilityTimeoutSecs),
        retentionPeriod: Duration.days(4),
        maxMessageSizeBytes: SQS_MAX_MESSAGE_BYTES,
        // SQS-managed keys: EventBridge and Scheduler can send without a KMS key policy.
        encryption: sqs.QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: spec.maxReceiveCount },
      });
      this.byId.set(spec.id, { queue, deadLetterQueue, spec });
    }
  }

  /** Every declared queue with its DLQ, in declaration order. */
  get all(): readonly ServiceQueue[] {
    return [...this.byId.values()];
  }

  /** The queue of a declared id; throws naming the user of an undeclared one. */
  get(id: string, usedBy: string): ServiceQueue {
    const found = this.byId.get(id);
    if (!found) throw new Error(`lib/wiring: ${usedBy} uses queue "${id}", which is not declared`);
    return found;
  }
}
