// A free loopback port, and a server started on one with retries: a port free when probed can be taken before the bind.
import { createServer } from 'node:net';

/**
 * A port of 127.0.0.1 that was free a moment ago (the OS picked it for a listener closed at once).
 * @example
 * const port = await freePort();
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Runs `start` on a free port, on a new one each time it fails, up to `tries` times; resolves with what it resolved.
 * @example
 * const child = await onFreePort((port) => launch(port));
 */
export async function onFreePort<T>(start: (port: number) => Promise<T>, tries = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await start(port);
    } catch (error) {
      if (attempt >= tries) throw error;
    }
  }
}
