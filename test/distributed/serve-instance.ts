// The process side every instance script shares: its required settings, and serving, announcing and draining a receiver.
import { createServer } from 'node:http';
import { basename } from 'node:path';
import type { Receiver } from 'workforce-webhooks';
import { createNodeHandler } from 'workforce-webhooks/node';

/**
 * The environment variable `key`, or a throw naming the script, since a missing setting is the test's mistake.
 * @example
 * const url = requireEnv('REDIS_URL');
 */
export function requireEnv(key: string): string {
  const value = process.env[key];
  if (value === undefined) throw new Error(`${basename(process.argv[1] ?? 'instance')}: ${key} is required`);
  return value;
}

/**
 * Serves `receiver` on a free loopback port and prints the `{"port":…}` line `startInstance` waits for. On SIGTERM it
 * stops taking deliveries, drains the queue, calls `release` (the script's own clients, which the receiver never
 * closes) and exits 0, which is the graceful stop the tests tell apart from a SIGKILL.
 * @example
 * serveInstance(receiver, { release: () => pool.end() });
 */
export function serveInstance(
  receiver: Receiver,
  { release = async () => {} }: { readonly release?: () => Promise<unknown> } = {},
): void {
  const server = createServer(createNodeHandler(receiver));
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number };
    process.stdout.write(`${JSON.stringify({ port })}\n`);
  });
  process.once('SIGTERM', async () => {
    server.close();
    await receiver.close({ timeoutMs: 10_000 });
    await release();
    process.exit(0);
  });
}
