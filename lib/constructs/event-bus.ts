import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { BusRule } from '../wiring';
import { EVENT_ARCHIVE_PATTERN } from '../wiring/areas/events';
import { pascalCase } from './naming';
import type { Queues } from './queues';

export interface EventBusProps {
  readonly rules: readonly BusRule[];
  readonly queues: Queues;
  /** 0 keeps archived events indefinitely. */
  readonly archiveRetentionDays: number;
}

/**
 * The service's custom bus, its archive of events published with `archive: true` (contract §3, POST /events),
 * and the declared rules, each delivering to a queue (failed deliveries go to that queue's DLQ) or invoking a bus
 * function (`addFunctionRule`, once the stack has created the function).
 */
export class ServiceEventBus extends Construct {
  readonly bus: events.EventBus;
  readonly archive: events.Archive;

  constructor(scope: Construct, id: string, props: EventBusProps) {
    super(scope, id);
    this.bus = new events.EventBus(this, 'Bus', { description: 'Notify domain events' });
    this.archive = this.bus.archive('Archive', {
      description: 'Events published with archive: true, kept for replay',
      eventPattern: EVENT_ARCHIVE_PATTERN as events.EventPattern,
      retention: Duration.days(props.archiveRetentionDays),
    });
    for (const rule of props.rules) {
      if (!('targetQueue' in rule)) continue;
      const target = props.queues.get(rule.targetQueue, `bus rule "${rule.id}"`);
      this.addRule(rule, new targets.SqsQueue(target.queue, { deadLetterQueue: target.deadLetterQueue }));
    }
  }

  /**
   * A rule invoking a bus function asynchronously. EventBridge retries a delivery Lambda refuses (throttled, a
   * service error) for up to a day and then puts the event in `deadLetterQueue`, the function's on-failure
   * destination, where Lambda's records of events that failed every attempt go too.
   */
  addFunctionRule(rule: BusRule, fn: lambda.IFunction, deadLetterQueue: sqs.IQueue): void {
    this.addRule(
      rule,
      new targets.LambdaFunction(fn, {
        deadLetterQueue,
        retryAttempts: EVENTBRIDGE_RETRY_ATTEMPTS,
        maxEventAge: Duration.hours(24),
      }),
    );
  }

  private addRule(rule: BusRule, target: events.IRuleTarget): void {
    new events.Rule(this, pascalCase(rule.id), {
      eventBus: this.bus,
      description: rule.description,
      // Declared as AWS documents patterns (`detail-type`, …); CDK passes such keys through unchanged.
      eventPattern: rule.pattern as events.EventPattern,
      targets: [target],
    });
  }
}

/** EventBridge's own retries of a target it cannot reach (its default and maximum, 185, within 24 h). */
export const EVENTBRIDGE_RETRY_ATTEMPTS = 185;
