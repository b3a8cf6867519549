import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { CfnTable } from 'aws-cdk-lib/aws-dynamodb';
import { describe, expect, it } from 'vitest';
import { envNames } from '../../common/env';
import { DataTables } from '../../lib/constructs/data-tables';
import { wiring } from '../../lib/wiring';

/** The tables' logical ids, built as the stack builds them (scope `Tables`), without a whole synth. */
const logicalIds = (): Record<string, string> => {
  const stack = new Stack(new App(), 'Notify');
  const tables = new DataTables(stack, 'Tables', {
    specs: wiring.tables,
    removalPolicy: RemovalPolicy.DESTROY,
    deletionProtection: false,
  });
  return Object.fromEntries(
    tables.all.map(({ id, table }) => [id, stack.getLogicalId(table.node.defaultChild as CfnTable)]),
  );
};

describe('the declared tables', () => {
  it('name the JWT jti set `tokenReplay`, apart from session and event replay', () => {
    const ids = wiring.tables.map((table) => table.id);
    expect(ids).toContain('tokenReplay');
    expect(ids).not.toContain('replay');
    expect(envNames.tableName('tokenReplay')).toBe('NOTIFY_TABLE_TOKEN_REPLAY');
  });

  it('keep the logical ids they were deployed with (a new one would make CloudFormation replace the table)', () => {
    expect(logicalIds()).toMatchObject({
      tokenReplay: 'TablesReplayF649A578',
      notifications: 'TablesNotifications29081F10',
      receivers: 'TablesReceiversB8D8B2D1',
      wsConnections: 'TablesWsConnectionsDB68E8D6',
      wsChannels: 'TablesWsChannels3FF8250A',
      wsSessions: 'TablesWsSessions3304DFCE',
      presence: 'TablesPresence7A1F7294',
      topics: 'TablesTopics64061272',
      subscriptions: 'TablesSubscriptionsEF5802C5',
      webhooks: 'TablesWebhooks9E9DC764',
    });
  });
});
