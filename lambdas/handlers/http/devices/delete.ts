import { httpRoute } from '../../../core/http/route';
import { deleteDevice } from '../../../domain/devices/devices';
import { deleteDeviceSchema } from '../../../domain/devices/schema';

export const handler = httpRoute('devices.delete', { body: deleteDeviceSchema }, async (request) => {
  await deleteDevice(request.principal.id, request.body.token);
  return { status: 204 };
});
