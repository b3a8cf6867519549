import { describe, expect, it } from 'vitest';
import {
  channelPattern,
  describeChannels,
  parseChannel,
  roomChannel,
  topicChannel,
  userChannel,
} from '../../../lambdas/domain/realtime/channel-names';

describe('channel names', () => {
  it('are built and parsed back by kind and name', () => {
    expect(parseChannel(userChannel('alice'))).toEqual({ kind: 'user', name: 'alice' });
    expect(parseChannel(roomChannel('a:b'))).toEqual({ kind: 'room', name: 'a:b' });
    expect(parseChannel(topicChannel('order.paid'))).toEqual({ kind: 'topic', name: 'order.paid' });
  });

  it.each([
    'lobby',
    'group:lobby',
    'room:',
    'room:two words',
    'room:a\u0000b',
    'room:line\u0085',
    'room:evil\u202e',
    'room:\u2066x',
  ])('refuse %s with a validation error', (channel) => {
    expect(() => parseChannel(channel)).toThrow(/channel must be user:<id>, room:<id> or topic:<name>/);
  });

  it('bound the name in UTF-8 bytes, however few its characters', () => {
    expect(parseChannel(`room:${'é'.repeat(256)}`).name).toHaveLength(256);
    expect(() => parseChannel(`room:${'é'.repeat(256)}x`)).toThrow(/1 to 512 bytes in UTF-8/);
    expect(() => parseChannel(`room:${'x'.repeat(600)}`)).toThrow(/channel is too long/);
    expect(() => parseChannel(`user:${'😀'.repeat(129)}`)).toThrow(/1 to 512 bytes in UTF-8/);
  });

  it('give the patterns and shapes the API documents show', () => {
    const name =
      '[^\\s\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u202a-\\u202e\\u2066-\\u2069]{1,512}';
    expect(channelPattern().source).toBe(`^(user|room|topic):${name}$`);
    expect(channelPattern(['room']).source).toBe(`^room:${name}$`);
    expect(describeChannels(['room'])).toBe('room:<id>');
  });
});
