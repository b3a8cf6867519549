import { pushSettings } from '../../../common/settings';
import { ApnsCredentialsError, createApnsSender } from './apns';
import { PushCredentialsMissing, pushCredentials } from './credentials';
import { createExpoSender, type ExpoCredentials } from './expo';
import { createFcmSender, FcmCredentialsError } from './fcm';
import type { PushContent, PushOutcome, PushProviderName, PushSender, PushTarget } from './provider';
import { createWebPushSender, parseWebPushCredentials, WebPushCredentialsError } from './webpush';

/**
 * The sender of one provider for one app (`app_id`; null: the stage's default app). One entry per provider module:
 * each builds its sender from the app's credentials (credentials.ts: Secrets Manager on AWS, the settings locally)
 * and its base URL settings (the local stand-ins'). An app without credentials for the provider throws
 * PushCredentialsMissing.
 */
type SenderFactory = (appId: string | null) => Promise<PushSender>;

const FACTORIES: Readonly<Record<PushProviderName, SenderFactory>> = {
  fcm: async (appId) => {
    const { urls } = pushSettings();
    return createFcmSender(await pushCredentials(appId, 'fcm'), {
      ...(urls.fcm ? { url: urls.fcm } : {}),
      ...(urls.fcmToken ? { tokenUrl: urls.fcmToken } : {}),
    });
  },
  apns: async (appId) => {
    const { urls, apnsCa } = pushSettings();
    return createApnsSender(await pushCredentials(appId, 'apns'), {
      ...(urls.apns ? { url: urls.apns } : {}),
      ...(apnsCa ? { ca: apnsCa } : {}),
    });
  },
  // A subscription names its push service: no URL setting, only the address policy of webhooks.
  webpush: async (appId) =>
    createWebPushSender(parseWebPushCredentials(await pushCredentials(appId, 'webpush'))),
  // Expo needs an access token only where the project enforces push security.
  expo: async (appId) => {
    const { urls } = pushSettings();
    const credentials = ((await pushCredentials(appId, 'expo')) ?? {}) as ExpoCredentials;
    return createExpoSender(credentials, urls.expo ? { url: urls.expo } : {});
  },
};

/** Built once per container and app: providers' tokens and HTTP/2 sessions live as long as the sender. */
const senders = new Map<string, Promise<PushSender>>();

/** The sender for `provider` and `appId`; rejects with PushCredentialsMissing when the app has no credentials for it. */
const senderFor = (provider: PushProviderName, appId: string | null): Promise<PushSender> => {
  const key = `${provider}\n${appId ?? ''}`;
  let sender = senders.get(key);
  if (!sender) {
    sender = FACTORIES[provider](appId);
    // A failed build (credentials unreadable for now) is tried again by the next push, not cached.
    sender.catch(() => senders.delete(key));
    senders.set(key, sender);
  }
  return sender;
};

/**
 * One push to one device through its app's sender. An app without credentials for the provider is a push that can
 * never go (`rejected`); credentials that do not parse are ours to fix (`credentials`: alarm and DLQ, no device
 * deleted). A secret that cannot be read now throws: the message is retried.
 */
export const sendPush = async (target: PushTarget, content: PushContent): Promise<PushOutcome> => {
  let sender: PushSender;
  try {
    sender = await senderFor(target.provider, target.app_id);
  } catch (error) {
    if (error instanceof PushCredentialsMissing) return { kind: 'rejected', reason: error.message };
    if (
      error instanceof FcmCredentialsError ||
      error instanceof ApnsCredentialsError ||
      error instanceof WebPushCredentialsError
    ) {
      return { kind: 'credentials', reason: error.message };
    }
    throw error;
  }
  return sender.send(target, content);
};
