/**
 * What each of a user's devices would have received (docs/push.md, "Locally"): the pushes the stand-ins took for
 * the user's registered tokens, and marking one of those tokens dead so the next push to it is answered as the
 * provider answers a dead token (and the device is pruned). The user is whoever the bearer token says: the
 * devices come from the service's own `GET /devices` with it, so a caller sees and kills only its own.
 */
import type { PushStandIn, ReceivedPush } from './stand-in';

interface DeviceView {
  readonly token: string;
  readonly provider: string;
  readonly app_id: string | null;
}

/** A failure to pass on as it is: the service's own answer (401 for a bad token, …) or a local refusal. */
export class PushesRefused extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const devicesOf = async (httpUrl: string, authorization: string): Promise<DeviceView[]> => {
  const devices: DeviceView[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const response = await fetch(`${httpUrl}/devices?limit=100${query}`, { headers: { authorization } });
    const body = (await response.json()) as {
      items?: DeviceView[];
      next_cursor?: string | null;
      code?: string;
      message?: string;
    };
    if (!response.ok) throw new PushesRefused(response.status, body.code ?? 'internal', body.message ?? '');
    devices.push(...(body.items ?? []));
    cursor = body.next_cursor ?? null;
  } while (cursor);
  return devices;
};

export interface UserPushes {
  readonly devices: readonly DeviceView[];
  /** Oldest first. */
  readonly pushes: readonly ReceivedPush[];
}

/** The user's devices and every push the stand-ins received for them. */
export const pushesOfUser = async (
  httpUrl: string,
  authorization: string,
  standIns: readonly PushStandIn[],
): Promise<UserPushes> => {
  const devices = await devicesOf(httpUrl, authorization);
  const tokens = new Set(devices.map((device) => `${device.provider}\n${device.token}`));
  const pushes = standIns
    .flatMap((standIn) => standIn.received())
    .filter((push) => tokens.has(`${push.provider}\n${push.token}`))
    .sort((a, b) => a.at.localeCompare(b.at));
  return {
    devices: devices.map(({ token, provider, app_id }) => ({ token, provider, app_id })),
    pushes,
  };
};

/** Marks one of the user's device tokens dead at its provider's stand-in. */
export const markDeviceDead = async (
  httpUrl: string,
  authorization: string,
  standIns: readonly PushStandIn[],
  token: string,
): Promise<void> => {
  const device = (await devicesOf(httpUrl, authorization)).find((candidate) => candidate.token === token);
  if (!device) throw new PushesRefused(404, 'not_found', 'No such token among your devices');
  const standIn = standIns.find((candidate) => candidate.provider === device.provider);
  if (!standIn) {
    throw new PushesRefused(
      404,
      'not_found',
      `No ${device.provider} stand-in runs here (local/push/stand-ins.ts)`,
    );
  }
  standIn.markDead(token);
};
