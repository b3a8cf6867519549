/**
 * The identifier bounds (lambdas/core/identifiers.ts) as properties: at and around each bound, in a mix of 1- to
 * 4-byte characters, the schemas, the channel parser and the token verifier accept exactly the identifiers
 * within it; and every key built from identifiers at their bounds is within DynamoDB's key limits.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseAuthConfig } from '../../../common/settings';
import { createTokenVerifier } from '../../../lambdas/core/auth';
import { principalFor } from '../../../lambdas/core/auth/claims';
import { ServiceError } from '../../../lambdas/core/errors';
import { identifierSchema } from '../../../lambdas/core/identifier-schema';
import { IDENTIFIER_BYTES, utf8Bytes } from '../../../lambdas/core/identifiers';
import {
  parseChannel,
  roomChannel,
  topicChannel,
  userChannel,
} from '../../../lambdas/domain/realtime/channel-names';
import { subscriptionIdFor } from '../../../lambdas/domain/topics/subscriptions';
import { identifierOfBytes, nearBound } from '../../support/identifiers';
import { authEnvFor, serviceToken, TEST_HS256_SECRET, userToken } from '../../support/tokens';

const RUNS = 200;
const PARTITION_KEY_BYTES = 2048;
const SORT_KEY_BYTES = 1024;

describe('identifier bounds', () => {
  it('generated identifiers have the byte length they claim', () => {
    fc.assert(
      fc.property(nearBound('userId'), ({ value, bytes }) => {
        expect(utf8Bytes(value)).toBe(bytes);
      }),
      { numRuns: RUNS },
    );
  });

  it.each(['userId', 'serviceName', 'channelName'] as const)(
    'the %s schema accepts exactly the identifiers within the bound, and names the rule in bytes',
    (kind) => {
      const schema = identifierSchema(kind);
      fc.assert(
        fc.property(nearBound(kind), ({ value, within }) => {
          const result = schema.safeParse(value);
          expect(result.success).toBe(within);
          if (!result.success) {
            expect(result.error.issues.map((issue) => issue.message)).toEqual([
              `must be 1 to ${IDENTIFIER_BYTES[kind]} bytes in UTF-8`,
            ]);
          }
        }),
        { numRuns: RUNS },
      );
    },
  );

  it('channels of every kind: the name within the bound parses, past it is a validation error', () => {
    fc.assert(
      fc.property(
        nearBound('channelName'),
        fc.constantFrom(userChannel, roomChannel, topicChannel),
        ({ value, within }, channelOf) => {
          const parse = () => parseChannel(channelOf(value));
          if (within) expect(parse().name).toBe(value);
          else expect(parse).toThrow(/1 to 512 bytes in UTF-8/);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('a token subject or service name past its bound is a 401; within it, the principal', async () => {
    const verifier = createTokenVerifier(parseAuthConfig(authEnvFor(undefined)));
    const outcome = async (token: Promise<string>) =>
      verifier.verify(await token).then(
        (principal) => principal.id,
        (error: unknown) => (error instanceof ServiceError ? error.status : error),
      );
    await fc.assert(
      fc.asyncProperty(nearBound('userId'), nearBound('serviceName'), async (user, service) => {
        const asUser = await outcome(userToken(TEST_HS256_SECRET, { sub: user.value }));
        expect(asUser).toBe(user.within ? user.value : 401);
        // The service name is the `service` claim, else `sub`: both are bounded.
        for (const claims of [{ service: service.value }, { sub: service.value }]) {
          const asService = await outcome(serviceToken(TEST_HS256_SECRET, claims));
          expect(asService).toBe(service.within ? service.value : 401);
        }
      }),
      { numRuns: 50 },
    );
  });

  it('the principal of an introspected token is bounded the same way (one rule for JWTs and opaque tokens)', () => {
    const config = parseAuthConfig(authEnvFor(undefined));
    const identity = { roles: [], scopes: [], expiresAt: Math.floor(Date.now() / 1000) + 60 };
    const outcome = (build: () => { id: string }) => {
      try {
        return build().id;
      } catch (error) {
        return error instanceof ServiceError ? error.status : error;
      }
    };
    fc.assert(
      fc.property(nearBound('userId'), nearBound('serviceName'), (user, service) => {
        const asUser = outcome(() =>
          principalFor(config, {
            ...identity,
            audiences: [config.audience],
            userId: user.value,
            serviceId: undefined,
          }),
        );
        expect(asUser).toBe(user.within ? user.value : 401);
        const asService = outcome(() =>
          principalFor(config, {
            ...identity,
            audiences: [config.serviceAudience],
            userId: undefined,
            serviceId: service.value,
          }),
        );
        expect(asService).toBe(service.within ? service.value : 401);
      }),
      { numRuns: RUNS },
    );
  });

  it('keeps every key built from identifiers at their bounds within DynamoDB’s limits', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', 'é', '€', '😀'), { minLength: 1, maxLength: 8 }),
        (pattern) => {
          const user = identifierOfBytes(IDENTIFIER_BYTES.userId, pattern);
          const room = identifierOfBytes(IDENTIFIER_BYTES.channelName, pattern);
          const service = identifierOfBytes(IDENTIFIER_BYTES.serviceName, pattern);
          const topic = 't'.repeat(128);
          // API Gateway's connection ids are 16 characters.
          const connection = 'L0SM9cOFvHcCIhw=';
          for (const partitionKey of [
            userChannel(user),
            roomChannel(room),
            topicChannel(room),
            `user:${user}`,
          ]) {
            expect(utf8Bytes(partitionKey)).toBeLessThanOrEqual(PARTITION_KEY_BYTES);
          }
          // Presence: `<user>#<connection>` and the bound its paging queries up to, `<user>#U+10FFFF`.
          for (const sortKey of [`${user}#${connection}`, `${user}#\u{10FFFF}`, user]) {
            expect(utf8Bytes(sortKey)).toBeLessThanOrEqual(SORT_KEY_BYTES);
          }
          // Idempotency records: `<operation>\n<kind>:<principal>\n<key>`, a key of 128 3-byte characters.
          const idempotency = `notifications.create\nservice:${service}\n${'€'.repeat(128)}`;
          expect(utf8Bytes(idempotency)).toBeLessThanOrEqual(PARTITION_KEY_BYTES);
          const userIdempotency = `notifications.create\nuser:${user}\n${'€'.repeat(128)}`;
          expect(utf8Bytes(userIdempotency)).toBeLessThanOrEqual(PARTITION_KEY_BYTES);
          // A subscription id is a path parameter (at most 1,024 bytes): the longest must fit.
          expect(utf8Bytes(subscriptionIdFor(topic, user))).toBeLessThanOrEqual(SORT_KEY_BYTES);
        },
      ),
      { numRuns: RUNS },
    );
  });
});
