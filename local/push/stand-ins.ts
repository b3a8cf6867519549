/**
 * The push providers' stand-ins of the local runtime (docs/push.md, "Locally"): each started on its own port with
 * credentials generated at start, and the `SERVICE__PUSH__*` settings that make the one local app use them and
 * point the senders at them.
 */
import { type PushSettingKey, pushSettingName } from '../../common/env';
import type { PushProvider } from '../../common/settings';
import { startApnsStandIn } from './apns-stand-in';
import { startFcmStandIn } from './fcm-stand-in';
import type { PushStandIn } from './stand-in';
import { startWebPushStandIn } from './webpush-stand-in';

/** The app every local device belongs to (the default app): it has every started stand-in's credentials. */
export const LOCAL_PUSH_APP = 'local';

/** A started stand-in and what the service needs to use it. */
export interface StartedPushStandIn {
  readonly standIn: PushStandIn;
  readonly provider: PushProvider;
  /** The credentials, shaped as the provider's secret holds them; undefined for none (Expo without a token). */
  readonly credentials: unknown;
  /** The settings that point the provider's sender at the stand-in (base URLs, CA). */
  readonly settings: Readonly<Partial<Record<PushSettingKey, string>>>;
}

export type PushStandInStarter = () => Promise<StartedPushStandIn>;

/**
 * The stand-ins `npm start` runs, one line each: `async () => { const standIn = await start…StandIn(); return
 * { standIn, provider, credentials: standIn.credentials, settings: { FCM_URL: standIn.url, … } }; }`.
 */
export const PUSH_STAND_INS: readonly PushStandInStarter[] = [
  async () => {
    const standIn = await startFcmStandIn();
    return { standIn, provider: 'fcm', credentials: standIn.credentials, settings: { FCM_URL: standIn.url } };
  },
  async () => {
    const standIn = await startApnsStandIn();
    const settings = { APNS_URL: standIn.url, APNS_CA: standIn.ca };
    return { standIn, provider: 'apns', credentials: standIn.credentials, settings };
  },
  // A subscription names its own endpoint on the stand-in: the sender needs no URL setting.
  async () => {
    const standIn = await startWebPushStandIn();
    return { standIn, provider: 'webpush', credentials: standIn.credentials, settings: {} };
  },
];

export interface PushStandIns {
  readonly standIns: readonly PushStandIn[];
  /** The `SERVICE__PUSH__*` variables of the functions that declare `push`; empty when none started. */
  readonly env: Readonly<Record<string, string>>;
  close(): Promise<void>;
}

export const startPushStandIns = async (
  starters: readonly PushStandInStarter[] = PUSH_STAND_INS,
): Promise<PushStandIns> => {
  const started: StartedPushStandIn[] = [];
  const close = async () => {
    await Promise.all(started.splice(0).map((entry) => entry.standIn.close().catch(() => {})));
  };
  try {
    // At once: every runtime a test starts starts them (APNs generates a CA and a certificate).
    const results = await Promise.allSettled(starters.map((start) => start()));
    for (const result of results) if (result.status === 'fulfilled') started.push(result.value);
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  } catch (error) {
    await close();
    throw error;
  }
  const app: Record<string, unknown> = {};
  const env: Record<string, string> = {};
  for (const { provider, credentials, settings } of started) {
    if (provider in app) throw new Error(`local/push: two stand-ins for ${provider}`);
    app[provider] = credentials === undefined ? {} : { credentials };
    for (const [key, value] of Object.entries(settings)) env[pushSettingName(key as PushSettingKey)] = value;
  }
  if (started.length > 0) {
    env[pushSettingName('APPS')] = JSON.stringify({ [LOCAL_PUSH_APP]: app });
    env[pushSettingName('DEFAULT_APP')] = LOCAL_PUSH_APP;
  }
  const standIns = started.map((entry) => entry.standIn);
  return { standIns, env, close };
};
