import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceError } from '../../../lambdas/core/errors';
import { parseOrThrow } from '../../../lambdas/core/validation';
import { asBusEnvelope, eventFrameFor } from '../../../lambdas/domain/events/frames';
import { publishEvent } from '../../../lambdas/domain/events/publish';
import { publishEventSchema } from '../../../lambdas/domain/events/schema';
import { envNames, wiring } from '../../../lib/wiring';
import { EVENT_ARCHIVE_PATTERN } from '../../../lib/wiring/areas/events';
import { LocalEventBridge } from '../../../local/eventbridge/local-eventbridge';
import { waitUntil } from '../../support/await';
import { type QueuesWithoutWorkers, startQueuesWithoutWorkers } from '../../support/queues';

const BUS = 'notify-unit';
let queues: QueuesWithoutWorkers;
let bus: LocalEventBridge;
const saved = { ...process.env };
/** The events the bus invoked the frames function with (the test plays the function). */
const framesEvents: unknown[] = [];
let framesTaken = 0;

beforeAll(async () => {
  // The declared queues and bus rules, no workers: the test sees what the rule invokes the frames function with.
  queues = await startQueuesWithoutWorkers(async (fn, event) => {
    if (fn.id === 'events.frames') framesEvents.push(event);
  });
  bus = new LocalEventBridge({
    busName: BUS,
    rules: wiring.busRules,
    sqs: queues.sqs,
    lambda: queues.lambda,
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
});
afterAll(async () => {
  process.env = saved;
  await bus?.stop();
  await queues?.stop();
});

/** The next `count` events the frames function was invoked with, once they have come. */
const receiveFrames = async (count: number) => {
  await waitUntil(() => framesEvents.length >= framesTaken + count);
  // Anything more would be a duplicate of Lambda's asynchronous queue (exact delivery here: none).
  const taken = framesEvents.slice(framesTaken);
  framesTaken = framesEvents.length;
  return taken;
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
  it('puts the event on the bus, where the rule invokes the frames function with it and the archive skips it', async () => {
    const archivedBefore = bus.archivedEvents().length;
    const input = parseOrThrow(publishEventSchema, { ...valid, priority: 'high' });
    expect(await publishEvent(input, 'evt-1')).toEqual({
      status: 202,
      body: { id: 'evt-1', archived: false },
    });
    const [invoked, ...more] = await receiveFrames(1);
    expect(more).toEqual([]);
    const envelope = asBusEnvelope(invoked);
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
    expect(await receiveFrames(1)).toHaveLength(1);
    expect(await bus.replay({ name: 'unit-replay' })).toBe(1);
    const [replayed] = await receiveFrames(1);
    expect(asBusEnvelope(replayed)).toMatchObject({
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
      await queues.sqs.durable();
      expect(queues.lambda.asyncBacklog()).toBe(0);
      expect(await receiveFrames(0)).toEqual([]);
    } finally {
      process.env[envNames.busName] = BUS;
    }
  });

  it('refuses an event for the frames function that is not a published event', () => {
    expect(() => asBusEnvelope({ 'detail-type': 'x', source: 's', detail: {} })).toThrow();
  });
});
