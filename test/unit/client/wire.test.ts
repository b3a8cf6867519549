/**
 * The SDK's wire types are generated from the API documents (client/src/generated/wire.ts, by npm run api-docs;
 * the package must not import the service). These checks also tie them to the service's own types: they fail
 * the type check (`npm run typecheck`) when the service's frames or bodies change in a way the SDK's types no
 * longer describe.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type * as wire from '../../../client/src/wire';
import type { Device } from '../../../lambdas/domain/devices/devices';
import type { FeedItem } from '../../../lambdas/domain/notifications/feed';
import type { FeedStateFilter } from '../../../lambdas/domain/notifications/feed-query';
import type { CreateNotificationInput } from '../../../lambdas/domain/notifications/schema';
import type { Defaults } from '../../../lambdas/domain/preferences/preferences';
import type { DefaultDigest, ThrottleLimit } from '../../../lambdas/domain/preferences/rules';
import type { PutDefaultsInput } from '../../../lambdas/domain/preferences/schema';
import type * as frames from '../../../lambdas/domain/realtime/frames';

describe('client wire types', () => {
  it('describe every frame the service sends', () => {
    expectTypeOf<frames.NotificationFrame>().toExtend<wire.NotificationFrame>();
    expectTypeOf<frames.EventFrame>().toExtend<wire.EventFrame>();
    expectTypeOf<frames.PresenceFrame>().toExtend<wire.PresenceFrame>();
    expectTypeOf<frames.ErrorFrame>().toExtend<wire.ErrorFrame>();
    expectTypeOf<frames.SessionFrame>().toExtend<wire.SessionFrame>();
    expectTypeOf<frames.AckFrame>().toExtend<wire.AckFrame>();
    expectTypeOf<frames.HeartbeatAckFrame>().toExtend<wire.HeartbeatAckFrame>();
    expectTypeOf<frames.NotificationStateFrame>().toExtend<wire.NotificationStateFrame>();
    expectTypeOf<frames.NotificationBulkFrame>().toExtend<wire.NotificationBulkFrame>();
    expectTypeOf<frames.PresenceStatus>().toEqualTypeOf<wire.PresenceStatus>();
  });

  it('describe the REST bodies the SDK reads', () => {
    expectTypeOf<keyof FeedItem>().toEqualTypeOf<keyof wire.Receiver>();
    expectTypeOf<Device>().toExtend<wire.Device>();
    expectTypeOf<FeedStateFilter>().toEqualTypeOf<wire.FeedStateFilter>();
    expectTypeOf<Defaults['rules'][number]>().toExtend<wire.PreferenceDefaultRule>();
  });

  it('describe the throttles and digests a service sets', () => {
    expectTypeOf<PutDefaultsInput['rules'][number]>().toExtend<wire.PreferenceDefaultRule>();
    expectTypeOf<ThrottleLimit>().toExtend<wire.DefaultThrottle>();
    expectTypeOf<DefaultDigest>().toExtend<wire.DefaultDigest>();
    expectTypeOf<NonNullable<CreateNotificationInput['throttle']>>().toExtend<wire.NotificationThrottle>();
  });
});
