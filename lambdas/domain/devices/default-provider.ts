import type { PushProvider } from '../../../common/settings';
import type { Platform } from './schema';

/** Expo push tokens (`ExponentPushToken[…]`, `ExpoPushToken[…]`): only Expo's service can reach them. */
const EXPO_TOKEN = /^Expo(nent)?PushToken\[[^\]]+\]$/;

const PLATFORM_PROVIDERS: Readonly<Record<Platform, PushProvider>> = {
  ios: 'apns',
  android: 'fcm',
  web: 'webpush',
};

/**
 * The provider of a device registered without one (and of records older than the field): Expo by its token's
 * shape (an Expo app registers on iOS and Android alike), else the platform's own service.
 */
export const defaultProviderOf = (platform: Platform, token: string): PushProvider =>
  EXPO_TOKEN.test(token) ? 'expo' : PLATFORM_PROVIDERS[platform];
