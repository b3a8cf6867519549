/** Starting and stopping the HTTP servers that tests run: on 127.0.0.1, on a free port. */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens on 127.0.0.1 on a free port; resolves to the origin, e.g. `http://127.0.0.1:40123`. */
export const listenOnLoopback = async (server: Server): Promise<string> => {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

/** Closes the server and every connection still open to it (keep-alive ones included). */
export const stopServer = (server: Server): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    server.closeAllConnections();
    server.close((error) => (error ? reject(error) : resolve()));
  });
