import { envNames } from '../../../common/env';
import { createExpoSender } from './expo';
import type { PushProviderName, PushSender } from './provider';

/**
 * The sender of one provider for one app (`app_id`; null: the stage's default app), or undefined when that app has
 * no credentials for the provider. One entry per provider module: each builds its sender from the app's credentials
 * and its base URL setting (the local stand-ins').
 */
type SenderFactory = (appId: string | null) => Promise<PushSender | undefined>;

const FACTORIES: Readonly<Partial<Record<PushProviderName, SenderFactory>>> = {
  // Expo needs no credentials (an access token only where the project enforces push security).
  expo: async () => {
    const url = process.env[envNames.pushExpoUrl];
    return createExpoSender({}, url ? { url } : {});
  },
};

/** Built once per container and app: providers' tokens and HTTP/2 sessions live as long as the sender. */
const senders = new Map<string, Promise<PushSender | undefined>>();

/** The sender for `provider` and `appId`; undefined when the provider is not configured for that app. */
export const senderFor = (
  provider: PushProviderName,
  appId: string | null,
): Promise<PushSender | undefined> => {
  const key = `${provider}\n${appId ?? ''}`;
  let sender = senders.get(key);
  if (!sender) {
    const factory = FACTORIES[provider];
    sender = factory ? factory(appId) : Promise.resolve(undefined);
    // A failed build (credentials unreadable for now) is tried again by the next push, not cached.
    sender.catch(() => senders.delete(key));
    senders.set(key, sender);
  }
  return sender;
};
