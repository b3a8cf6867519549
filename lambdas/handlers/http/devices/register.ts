import { httpRoute } from '../../../core/http/route';
import { registerDevice, registerDeviceSchema } from '../../../domain/devices/devices';

export const handler = httpRoute('devices.register', { body: registerDeviceSchema }, async (request) => ({
  status: 201,
  body: await registerDevice(request.principal.id, request.body),
}));
