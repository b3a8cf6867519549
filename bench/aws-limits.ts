/**
 * AWS default quotas (us-east-1, late 2026) the scale extrapolation uses; docs/scale.md lists each with its
 * documentation page. `adjustable`: a Service Quotas request can raise it.
 */
export interface AwsLimit {
  readonly id: string;
  readonly what: string;
  readonly value: number;
  readonly unit: string;
  readonly adjustable: boolean;
  readonly source: string;
}

const limit = (
  id: string,
  what: string,
  value: number,
  unit: string,
  adjustable: boolean,
  source: string,
): AwsLimit => ({ id, what, value, unit, adjustable, source });

export const AWS_LIMITS = {
  apiGatewayAccountRps: limit(
    'L1',
    'API Gateway account throttle (HTTP + WebSocket messages + @connections calls)',
    10_000,
    'requests/s',
    true,
    'https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html',
  ),
  webSocketNewConnections: limit(
    'L2',
    'WebSocket new connections',
    500,
    'connections/s',
    true,
    'https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-execution-service-websocket-limits-table.html',
  ),
  webSocketConnectionSecs: limit(
    'L3',
    'WebSocket connection duration',
    7_200,
    's',
    false,
    'https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-execution-service-websocket-limits-table.html',
  ),
  lambdaConcurrency: limit(
    'L4',
    'Lambda concurrent executions (account)',
    1_000,
    'executions',
    true,
    'https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html',
  ),
  sqsEventSourceRampPerMinute: limit(
    'L6',
    'SQS event source mapping: added concurrent batches per minute',
    300,
    'batches/min',
    false,
    'https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html',
  ),
  partitionReadUnits: limit(
    'L7',
    'DynamoDB read units per partition',
    3_000,
    'RRU/s',
    false,
    'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput-scenarios.html',
  ),
  partitionWriteUnits: limit(
    'L7',
    'DynamoDB write units per partition',
    1_000,
    'WRU/s',
    false,
    'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput-scenarios.html',
  ),
  tableWriteUnits: limit(
    'L8',
    'DynamoDB on-demand write units per table',
    40_000,
    'WRU/s',
    true,
    'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode-max-throughput.html',
  ),
  putEvents: limit(
    'L11',
    'EventBridge PutEvents entries',
    10_000,
    'entries/s',
    true,
    'https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-quota.html',
  ),
} as const;
