import { events } from './areas/events';
import { notifications } from './areas/notifications';
import { platform } from './areas/platform';
import { push } from './areas/push';
import { realtime } from './areas/realtime';
import { webhooks } from './areas/webhooks';
import type { Wiring, WiringPart } from './types';

/**
 * The one declaration of the service's wiring. lib/stack builds AWS resources from it; local/ mounts the
 * same handler modules from it. Each area of the service declares its part in lib/wiring/areas/, and its
 * functions deploy in a nested stack of that area.
 */
const areas = { platform, notifications, realtime, events, webhooks, push } as const satisfies Record<
  string,
  WiringPart
>;
const parts: readonly WiringPart[] = Object.values(areas);

const merge = <K extends keyof WiringPart>(key: K): Wiring[K] =>
  parts.flatMap((part) => (part[key] ?? []) as readonly unknown[]) as unknown as Wiring[K];

export const wiring: Wiring = {
  httpRoutes: merge('httpRoutes'),
  webSocketRoutes: merge('webSocketRoutes'),
  webSocketMockRoutes: merge('webSocketMockRoutes'),
  tables: merge('tables'),
  queues: merge('queues'),
  workers: merge('workers'),
  busFunctions: merge('busFunctions'),
  busRules: merge('busRules'),
  recurringSchedules: merge('recurringSchedules'),
  scheduleTargets: merge('scheduleTargets'),
  areas,
};

/** Looks up an HTTP route by its id; throws for an undeclared id (a wiring bug, caught by tests). */
export const httpRouteById = (id: string) => {
  const route = wiring.httpRoutes.find((candidate) => candidate.id === id);
  if (!route) throw new Error(`HTTP route ${id} is not declared in lib/wiring`);
  return route;
};
