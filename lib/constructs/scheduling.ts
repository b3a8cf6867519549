import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';
import type { ScheduleTarget } from '../wiring';
import type { Queues } from './queues';

/**
 * Home of the one-time `at()` schedules functions create at run time: a schedule group, and the role
 * EventBridge Scheduler assumes to send each schedule's payload to a declared target queue.
 */
export class OneTimeScheduling extends Construct {
  readonly group: scheduler.ScheduleGroup;
  readonly role: iam.Role;
  readonly targets: readonly ScheduleTarget[];

  constructor(
    scope: Construct,
    id: string,
    props: { readonly targets: readonly ScheduleTarget[]; readonly queues: Queues },
  ) {
    super(scope, id);
    this.targets = props.targets;
    this.group = new scheduler.ScheduleGroup(this, 'Group', {});
    const { account } = Stack.of(this);
    this.role = new iam.Role(this, 'SchedulerRole', {
      description: 'Assumed by EventBridge Scheduler to deliver one-time schedules to their queues',
      // Only schedules of this account may assume it (confused-deputy guard).
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': account } },
      }),
    });
    for (const target of props.targets) {
      props.queues
        .get(target.targetQueue, `schedule target "${target.id}"`)
        .queue.grantSendMessages(this.role);
    }
  }

  /** Lets a function create and delete schedules in the group, and hand the scheduler role to them. */
  grantManageSchedules(grantee: iam.IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['scheduler:CreateSchedule', 'scheduler:DeleteSchedule'],
        // Schedule names are chosen at run time, so the resource is every schedule of this one group.
        resources: [
          Stack.of(this).formatArn({
            service: 'scheduler',
            resource: 'schedule',
            resourceName: `${this.group.scheduleGroupName}/*`,
          }),
        ],
      }),
    );
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.role.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
  }
}
