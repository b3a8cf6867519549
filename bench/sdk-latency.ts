import { WebSocket } from 'ws';
import type { NotificationFrame } from '../client/src/index';
import { RealtimeClient, type WebSocketConstructor } from '../client/src/index';
import { NotifyService } from '../client/src/service';
import type { MeteredRuntime } from './harness';
import { type LatencyResult, percentile } from './latency';
import { inBatches } from './ws-client';

/** One user's SDK realtime client, noting when each notification's frame reaches the app (the `notification` event). */
interface SdkRecipient {
  readonly client: RealtimeClient;
  readonly arrivals: Map<string, number>;
  readonly waiters: Map<string, () => void>;
}

const openRecipient = async (bench: MeteredRuntime, userId: string): Promise<SdkRecipient> => {
  const token = await bench.runtime.mintUserToken(userId);
  const client = new RealtimeClient({
    url: bench.runtime.wsUrl,
    getToken: () => token,
    // Node 20 has no global WebSocket; the SDK takes any class with the browser's API.
    WebSocket: WebSocket as unknown as WebSocketConstructor,
  });
  const recipient: SdkRecipient = { client, arrivals: new Map(), waiters: new Map() };
  client.on('notification', (frame: NotificationFrame) => {
    recipient.arrivals.set(frame.notification_id, performance.now());
    recipient.waiters.get(frame.notification_id)?.();
  });
  const session = new Promise<void>((resolve) => client.on('session', () => resolve()));
  client.connect();
  await session;
  return recipient;
};

const arrivalOf = (recipient: SdkRecipient, notificationId: string, timeoutMs: number): Promise<number> => {
  const arrived = recipient.arrivals.get(notificationId);
  if (arrived !== undefined) return Promise.resolve(arrived);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no frame of ${notificationId} in time`)), timeoutMs);
    recipient.waiters.set(notificationId, () => {
      clearTimeout(timer);
      recipient.waiters.delete(notificationId);
      resolve(recipient.arrivals.get(notificationId) ?? performance.now());
    });
  });
};

/**
 * POST → frame as an app meets it: the service creates the notification with the SDK's `NotifyService` (which
 * sends an Idempotency-Key, as every SDK create does) and each recipient's `RealtimeClient` (real WebSocket,
 * its own session, heartbeats and de-duplication) emits the `notification` event. One run per size, the
 * notifications one after the other.
 */
export const measureSdkLatency = async (
  bench: MeteredRuntime,
  serviceToken: string,
  sizes: readonly { readonly recipients: number; readonly notifications: number }[],
): Promise<LatencyResult[]> => {
  const largest = Math.max(...sizes.map((size) => size.recipients));
  const users = Array.from({ length: largest }, (_, index) => `sdk-lat-${index}`);
  const recipients = await inBatches(users, 25, (userId) => openRecipient(bench, userId));
  const service = new NotifyService({ apiUrl: bench.runtime.httpUrl, token: serviceToken });
  try {
    // No settle here or between runs: each connect leaves a delayed message (its auth deadline check) on a
    // queue for longer than settling waits. Each run waits for all its frames before the next POST.
    const results: LatencyResult[] = [];
    for (const size of sizes) {
      const targets = recipients.slice(0, size.recipients);
      const latencies: number[] = [];
      const lastFrames: number[] = [];
      for (let run = 0; run < size.notifications; run++) {
        const sentAt = performance.now();
        const { id } = await service.createNotification({
          event_type: 'bench.sdk',
          title: 'Benchmark',
          body: 'A notification of typical size for the benchmark.',
          data: { order_id: 'o-123456', amount: 42 },
          channels: ['in_app', 'toast'],
          recipient_ids: users.slice(0, size.recipients),
        });
        const arrivals = await Promise.all(targets.map((target) => arrivalOf(target, id, 60_000)));
        for (const arrival of arrivals) latencies.push(arrival - sentAt);
        lastFrames.push(Math.max(...arrivals) - sentAt);
      }
      latencies.sort((a, b) => a - b);
      lastFrames.sort((a, b) => a - b);
      results.push({
        via: 'client SDK',
        recipients: size.recipients,
        notifications: size.notifications,
        frames: latencies.length,
        p50Ms: percentile(latencies, 0.5),
        p99Ms: percentile(latencies, 0.99),
        maxMs: latencies.at(-1) ?? Number.NaN,
        lastFrameP50Ms: percentile(lastFrames, 0.5),
      });
    }
    return results;
  } finally {
    for (const recipient of recipients) recipient.client.disconnect();
  }
};
