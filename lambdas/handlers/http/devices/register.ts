import { httpRoute } from '../../../core/http/route';
import { registerDevice } from '../../../domain/devices/devices';
import { registerDeviceSchema } from '../../../domain/devices/schema';

export const handler = httpRoute('devices.register', { body: registerDeviceSchema }, async (request) => ({
  status: 201,
  body: await registerDevice(request.principal.id, request.body),
}));
