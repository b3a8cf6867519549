import { Duration, Validations } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { type QueueSpec, SQS_MAX_MESSAGE_BYTES } from '../wiring';
import { pascalCase } from './naming';

export interface ServiceQueue {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly spec: QueueSpec;
}

/** A dead-letter queue with no source queue: a bus function's on-failure destination (lib/wiring BusFunction). */
export interface FailureDestination {
  /** `deadLetterQueue` of the bus functions that share it. */
  readonly id: string;
  readonly purpose: string;
  readonly deadLetterQueue: sqs.Queue;
}

/**
 * The SQS queues of the declaration, each with its own dead-letter queue, and the dead-letter queues the bus
 * functions name as their on-failure destination; SSE on, TLS enforced.
 */
export class Queues extends Construct {
  private readonly byId = new Map<string, ServiceQueue>();
  private readonly failureById = new Map<string, FailureDestination>();

  constructor(
    scope: Construct,
    id: string,
    props: {
      readonly specs: readonly QueueSpec[];
      readonly failureDestinations?: readonly { readonly id: string; readonly purpose: string }[];
    },
  ) {
    super(scope, id);
    for (const spec of props.specs) {
      if (this.byId.has(spec.id)) throw new Error(`lib/wiring: queue "${spec.id}" is declared twice`);
      const name = pascalCase(spec.id);
      const deadLetterQueue = this.deadLetterQueue(`${name}Dlq`);
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
    for (const destination of props.failureDestinations ?? []) {
      if (this.byId.has(destination.id) || this.failureById.has(destination.id)) {
        throw new Error(`lib/wiring: dead-letter queue "${destination.id}-dlq" is declared twice`);
      }
      // The construct id of a declared queue's DLQ: a queue turned into a bus function keeps its DLQ.
      const deadLetterQueue = this.deadLetterQueue(`${pascalCase(destination.id)}Dlq`);
      Validations.of(deadLetterQueue).acknowledge({
        id: 'AwsSolutions-SQS3',
        reason:
          'The on-failure destination of a Lambda asynchronous invocation (and the bus rule target’s DLQ): a ' +
          'dead-letter queue that no redrive policy names, which cdk-nag cannot tell.',
      });
      this.failureById.set(destination.id, { ...destination, deadLetterQueue });
    }
  }

  private deadLetterQueue(constructId: string): sqs.Queue {
    return new sqs.Queue(this, constructId, {
      // The longest SQS allows: time to notice, fix and redrive.
      retentionPeriod: Duration.days(14),
      // Set explicitly so the stack does not depend on the account's default (common/limits.ts).
      maxMessageSizeBytes: SQS_MAX_MESSAGE_BYTES,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
  }

  /** The dead-letter queues that are on-failure destinations, in declaration order. */
  get failureDestinations(): readonly FailureDestination[] {
    return [...this.failureById.values()];
  }

  /** The on-failure destination `<id>-dlq`; throws naming the user of an undeclared one. */
  failureDestination(id: string, usedBy: string): FailureDestination {
    const found = this.failureById.get(id);
    if (!found)
      throw new Error(`lib/wiring: ${usedBy} uses dead-letter queue "${id}-dlq", which is not declared`);
    return found;
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
