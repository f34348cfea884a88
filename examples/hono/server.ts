// The Hono quick start as a runnable app: `npx tsx examples/hono/server.ts`, then send it signed deliveries.
import { pathToFileURL } from 'node:url';
// #region imports
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createReceiver, type Receiver } from 'workforce-webhooks';
import { createHonoHandler } from 'workforce-webhooks/hono';
// #endregion imports

/** The secret the demo verifies with when `WORKFORCE_WEBHOOK_SECRET` is unset. Local trials only. */
export const DEMO_SECRET = 'whsec_demo_bG9jYWwtdHJpYWxzLW9ubHktbm90LWEtcmVhbC1zZWNyZXQ';

/** Options of `createExampleApp`. */
export interface ExampleOptions {
  /** Default: `WORKFORCE_WEBHOOK_SECRET`, else (unset or empty) `DEMO_SECRET`. */
  readonly secret?: string;
  /** Where the handlers report what they did. Default `console.log`. */
  readonly log?: (line: string) => void;
}

/**
 * Builds the example app: the webhook route, and the rest of an app whose JSON routes read bodies as usual.
 * @example
 * const { app, receiver } = createExampleApp({ secret: 'whsec_test', log: (line) => lines.push(line) });
 */
export function createExampleApp({
  // `||`: a variable set but empty (`WORKFORCE_WEBHOOK_SECRET=` in a .env) is no secret, so the demo one is used.
  secret = process.env.WORKFORCE_WEBHOOK_SECRET || DEMO_SECRET,
  log = console.log,
}: ExampleOptions = {}): { readonly app: Hono; readonly receiver: Receiver } {
  // #region quickstart
  const receiver = createReceiver({ secret });
  receiver.on('leave.approved', (event) => {
    // Leave dates are calendar dates: keep the day as sent, never a local-zone Date.
    const { employeeId, startDate, endDate } = event.data;
    log(`calendar: block ${employeeId} ${startDate.slice(0, 10)}..${endDate.slice(0, 10)}`);
  });
  receiver.onAny((event) => log(`audit: ${event.type} ${event.id}`));
  receiver.onError((error, event) =>
    log(`error: ${event?.type ?? 'delivery'} ${event?.id ?? ''}: ${String(error)}`),
  );

  const app = new Hono();
  // No validator or body-reading middleware on this route: Hono caches the first read of a body, and a
  // `c.req.json()` before the handler leaves only re-serialised JSON, which no signature covers.
  app.all('/webhooks/workforce', createHonoHandler(receiver)); // every method: 405 but for POST
  app.post('/api/echo', async (c) => c.json(await c.req.json()));
  // #endregion quickstart
  return { app, receiver };
}

// Listen only when run directly (on Node), so tests can import the factory. On Bun or Workers, export the app:
// `export default createExampleApp().app` (Workers hand queued work to `c.executionCtx.waitUntil`).
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { app, receiver } = createExampleApp();
  const port = Number(process.env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`PORT=${process.env.PORT} is not a port: give 0 to 65535, e.g. PORT=3000`);
    process.exit(1);
  }
  const server = serve({ fetch: app.fetch, port }, (info) => {
    console.log(`workforce-webhooks example listening on http://localhost:${info.port}/webhooks/workforce`);
  });
  server.on('error', (error: NodeJS.ErrnoException) => {
    // Only a failed listen is about the port: a later error (a connection not accepted) is said, and serving goes on.
    if (error.syscall !== 'listen') return console.error(`server: ${error.message}`);
    // A port below 1024 needs root (EACCES): the next one would too, so 3000 is said instead.
    console.error(`port ${port}: ${error.message}; pick another with PORT=${port < 1024 ? 3000 : port + 1}`);
    process.exit(1);
  });
  const shutdown = async (): Promise<void> => {
    // New deliveries get 503 (the sender retries them) while accepted ones finish; then the server stops.
    await receiver.close();
    server.close();
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}
