import type { Usage } from '../local/metering';
import { PRICES } from './prices';

/** Billable units of one scenario run, by AWS service (what the table prints as "requests by service"). */
export interface ServiceUnits {
  httpApiRequests: number;
  wsMessages: number;
  wsConnectionMinutes: number;
  lambdaInvocations: number;
  lambdaGbSeconds: number;
  dynamoDbReadUnits: number;
  dynamoDbWriteUnits: number;
  dynamoDbRequests: number;
  sqsRequests: number;
  eventBridgeEvents: number;
  schedulerInvocations: number;
}

/** No usage at all: the start of a sum, or units filled in one by one. */
export const NO_UNITS: ServiceUnits = {
  httpApiRequests: 0,
  wsMessages: 0,
  wsConnectionMinutes: 0,
  lambdaInvocations: 0,
  lambdaGbSeconds: 0,
  dynamoDbReadUnits: 0,
  dynamoDbWriteUnits: 0,
  dynamoDbRequests: 0,
  sqsRequests: 0,
  eventBridgeEvents: 0,
  schedulerInvocations: 0,
};

export type ServiceDollars = Record<
  'apiGateway' | 'lambda' | 'dynamoDb' | 'sqs' | 'eventBridge' | 'scheduler' | 'total',
  number
>;

const sum = (values: Iterable<number>): number => {
  let total = 0;
  for (const value of values) total += value;
  return total;
};

export const unitsOf = (usage: Usage): ServiceUnits => {
  const lambdas = Object.values(usage.lambda);
  const tables = Object.values(usage.dynamoDb);
  return {
    httpApiRequests: usage.httpRequests,
    wsMessages: usage.wsMessagesIn + usage.wsMessagesOut,
    wsConnectionMinutes: usage.wsConnectionMinutes,
    lambdaInvocations: sum(lambdas.map((fn) => fn.invocations)),
    lambdaGbSeconds: sum(lambdas.map((fn) => fn.gbSeconds)),
    dynamoDbReadUnits: sum(tables.map((table) => table.readUnits)),
    dynamoDbWriteUnits: sum(tables.map((table) => table.writeUnits)),
    dynamoDbRequests: sum(tables.map((table) => table.readRequests + table.writeRequests)),
    sqsRequests: sum(Object.values(usage.sqsRequests)),
    eventBridgeEvents: usage.eventBridgeEvents,
    schedulerInvocations: usage.schedulerInvocations,
  };
};

export const scaleUnits = (units: ServiceUnits, factor: number): ServiceUnits =>
  Object.fromEntries(
    Object.entries(units).map(([key, value]) => [key, value * factor]),
  ) as unknown as ServiceUnits;

export const addUnits = (a: ServiceUnits, b: ServiceUnits): ServiceUnits =>
  Object.fromEntries(
    Object.entries(a).map(([key, value]) => [key, value + (b[key as keyof ServiceUnits] ?? 0)]),
  ) as unknown as ServiceUnits;

/** Dollars for these units, per service (multiply by 1e6 for "per million operations"). */
export const dollarsOf = (units: ServiceUnits): ServiceDollars => {
  const perUnit = (perMillion: number) => perMillion / 1e6;
  const apiGateway =
    units.httpApiRequests * perUnit(PRICES.httpApiPerMillionRequests) +
    units.wsMessages * perUnit(PRICES.webSocketPerMillionMessages) +
    units.wsConnectionMinutes * perUnit(PRICES.webSocketPerMillionConnectionMinutes);
  const lambda =
    units.lambdaInvocations * perUnit(PRICES.lambdaPerMillionRequests) +
    units.lambdaGbSeconds * PRICES.lambdaArmPerGbSecond;
  const dynamoDb =
    units.dynamoDbReadUnits * perUnit(PRICES.dynamoDbPerMillionReadUnits) +
    units.dynamoDbWriteUnits * perUnit(PRICES.dynamoDbPerMillionWriteUnits);
  const sqs = units.sqsRequests * perUnit(PRICES.sqsPerMillionRequests);
  const eventBridge = units.eventBridgeEvents * perUnit(PRICES.eventBridgePerMillionEvents);
  const scheduler = units.schedulerInvocations * perUnit(PRICES.schedulerPerMillionInvocations);
  return {
    apiGateway,
    lambda,
    dynamoDb,
    sqs,
    eventBridge,
    scheduler,
    total: apiGateway + lambda + dynamoDb + sqs + eventBridge + scheduler,
  };
};
