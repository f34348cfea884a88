// An endpoint on loopback that reads each request whole, then answers with the test's handler; closed by the test.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Starts the endpoint, pushes its close onto `closers`, and resolves with its URL at `path`.
 * @example
 * const url = await serveEndpoint((req, res) => res.writeHead(202).end(), '/hooks', closers);
 */
export async function serveEndpoint(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  path: string,
  closers: (() => Promise<unknown>)[],
): Promise<string> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
}
