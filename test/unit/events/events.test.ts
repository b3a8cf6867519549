import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../../lambdas/core/errors';
import { parseOrThrow } from '../../../lambdas/core/validation';
import { eventFrameFor, parseBusEnvelope } from '../../../lambdas/domain/events/frames';
import { publishEvent } from '../../../lambdas/domain/events/publish';
import { publishEventSchema } from '../../../lambdas/domain/events/schema';
import { envNames, wiring } from '../../../lib/wiring';
import { EVENT_ARCHIVE_PATTERN } from '../../../lib/wiring/areas/events';
import { LocalEventBridge } from '../../../local/eventbridge/local-eventbridge';
import type { LocalSqs } from '../../../local/sqs/local-sqs';
import { startQueuesWithoutWorkers } from '../../support/queues';

const BUS = 'notify-unit';
const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
let sqs: LocalSqs;
let bus: LocalEventBridge;
let sqsClient: SQSClient;
const saved = { ...process.env };

beforeAll(async () => {
  // The declared queues and bus rules, no workers: the test reads the rule's target queue itself.
  sqs = await startQueuesWithoutWorkers();
  bus = new LocalEventBridge({
    busName: BUS,
    rules: wiring.busRules,
    sqs,
    archivePattern: EVENT_ARCHIVE_PATTERN,
  });
  await bus.start();
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
    [envNames.busName]: BUS,
  });
  sqsClient = new SQSClient({ endpoint: sqs.endpoint, region: 'us-east-1', credentials });
});
afterAll(async () => {
  process.env = saved;
  sqsClient?.destroy();
  await bus?.stop();
  await sqs?.stop();
});

const receiveFrames = async () => {
  const result = await sqsClient.send(
    new ReceiveMessageCommand({ QueueUrl: sqs.queueUrl('eventFrames'), MaxNumberOfMessages: 10 }),
  );
  return (result.Messages ?? []).map((message) => message.Body ?? '');
};

const valid = { event_type: 'order.shipped', source: 'orders', version: 1, data: { id: 'o-1' } };

describe('POST /events body', () => {
  it('applies the defaults', () => {
    expect(parseOrThrow(publishEventSchema, valid)).toEqual({ ...valid, priority: 'normal', archive: false });
  });

  it('names each offending field', () => {
    const fields = (body: unknown) => {
      try {
        parseOrThrow(publishEventSchema, body);
        return [];
      } catch (error) {
        return ((error as ServiceError).details ?? []).map((detail) => `${detail.field}: ${detail.issue}`);
      }
    };
    expect(fields({})).toEqual([
      'event_type: required',
      'source: required',
      'version: required',
      'data: required',
    ]);
    expect(fields({ ...valid, version: 0 })[0]).toMatch(/^version:/);
    expect(fields({ ...valid, version: 1.5 })[0]).toMatch(/^version:/);
    expect(fields({ ...valid, version: '1' })[0]).toMatch(/^version:/);
    expect(fields({ ...valid, data: [] })[0]).toMatch(/^data:/);
    expect(fields({ ...valid, priority: 'asap' })[0]).toMatch(/^priority:/);
    expect(fields({ ...valid, archive: 'yes' })[0]).toMatch(/^archive:/);
    expect(fields({ ...valid, source: 'aws.s3' })[0]).toMatch(/^source:/);
    expect(fields({ ...valid, event_type: 'not dotted!' })[0]).toMatch(/^event_type:/);
    expect(fields({ ...valid, data: { blob: 'x'.repeat(17 * 1024) } })[0]).toMatch(/^data:/);
    expect(fields({ ...valid, extra: 1 })).toEqual(['extra: unknown field']);
  });
});

describe('publishEvent', () => {
  it('puts the event on the bus, where the rule hands it to the frames queue and the archive skips it', async () => {
    const archivedBefore = bus.archivedEvents().length;
    const input = parseOrThrow(publishEventSchema, { ...valid, priority: 'high' });
    expect(await publishEvent(input, 'evt-1')).toEqual({
      status: 202,
      body: { id: 'evt-1', archived: false },
    });
    const [body, ...more] = await receiveFrames();
    expect(more).toEqual([]);
    const envelope = parseBusEnvelope(body as string);
    expect(envelope).toMatchObject({
      source: 'orders',
      'detail-type': 'order.shipped',
      detail: { id: 'evt-1', version: 1, data: { id: 'o-1' }, priority: 'high', archive: false },
    });
    expect(eventFrameFor(envelope)).toEqual({
      type: 'event',
      channel: 'topic:order.shipped',
      id: 'evt-1',
      event_type: 'order.shipped',
      source: 'orders',
      version: 1,
      data: { id: 'o-1' },
      time: envelope.time,
    });
    expect(bus.archivedEvents()).toHaveLength(archivedBefore);
  });

  it('archives events published with archive: true, and a replay delivers them again', async () => {
    const input = parseOrThrow(publishEventSchema, { ...valid, event_type: 'order.kept', archive: true });
    expect(await publishEvent(input, 'evt-2')).toEqual({
      status: 202,
      body: { id: 'evt-2', archived: true },
    });
    const archived = bus.archivedEvents().filter((event) => event['detail-type'] === 'order.kept');
    expect(archived).toHaveLength(1);
    expect(await receiveFrames()).toHaveLength(1);
    expect(await bus.replay({ name: 'unit-replay' })).toBe(1);
    const [replayed] = await receiveFrames();
    expect(parseBusEnvelope(replayed as string)).toMatchObject({
      'replay-name': 'unit-replay',
      detail: { id: 'evt-2', archive: true },
    });
  });

  it('answers 503 when the bus fails the entry, and nothing is delivered', async () => {
    process.env[envNames.busName] = 'missing-bus';
    try {
      const input = parseOrThrow(publishEventSchema, valid);
      const error = await publishEvent(input, 'evt-3').catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ServiceError);
      expect((error as ServiceError).status).toBe(503);
      expect(bus.counters().failedEntries).toBeGreaterThan(0);
      expect(await receiveFrames()).toEqual([]);
    } finally {
      process.env[envNames.busName] = BUS;
    }
  });

  it('refuses a message on the frames queue that is not a published event', () => {
    expect(() => parseBusEnvelope(JSON.stringify({ 'detail-type': 'x', source: 's', detail: {} }))).toThrow();
  });
});
