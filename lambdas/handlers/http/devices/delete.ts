import { httpRoute } from '../../../core/http/route';
import { deleteDevice, deleteDeviceSchema } from '../../../domain/devices/devices';

export const handler = httpRoute('devices.delete', { body: deleteDeviceSchema }, async (request) => {
  await deleteDevice(request.principal.id, request.body.token);
  return { status: 204 };
});
