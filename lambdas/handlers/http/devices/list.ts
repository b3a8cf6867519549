import { httpRoute } from '../../../core/http/route';
import { listDevices } from '../../../domain/devices/devices';

export const handler = httpRoute('devices.list', {}, async (request) => ({
  status: 200,
  body: { items: await listDevices(request.principal.id) },
}));
