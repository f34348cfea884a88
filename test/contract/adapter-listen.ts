// Starts a node:http server on a free loopback port and gives the contract its URL and a close that does not hang.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MountedApp } from './adapter-suite.js';

/** The path the contract's apps mount the webhook route on. */
export const WEBHOOK_PATH = '/webhooks/workforce';

/**
 * Listens on `127.0.0.1:0` and returns the webhook URL on that port.
 * @example
 * const app = await listen(http.createServer(createNodeHandler(receiver)));
 */
export async function listen(server: Server, path: string = WEBHOOK_PATH): Promise<MountedApp> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive sockets of the test's fetch would hold close() open.
        server.closeAllConnections();
      }),
  };
}
