import { httpRoute } from '../../../core/http/route';
import { listDevices } from '../../../domain/devices/devices';
import { listDevicesQuerySchema } from '../../../domain/devices/schema';

export const handler = httpRoute('devices.list', { query: listDevicesQuerySchema }, async (request) => ({
  status: 200,
  body: await listDevices(request.principal.id, request.query),
}));
