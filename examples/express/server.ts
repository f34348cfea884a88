// The README quick start as a runnable Express app: `npx tsx examples/express/server.ts`, then send it signed deliveries.
import { pathToFileURL } from 'node:url';
// #region imports
import express, { type Express } from 'express';
import { createReceiver, type Receiver } from 'workforce-webhooks';
import type { ApiClient } from 'workforce-webhooks/api';
import { createExpressMiddleware } from 'workforce-webhooks/express';
// #endregion imports

/** The secret the demo verifies with when `WORKFORCE_WEBHOOK_SECRET` is unset. Local trials only. */
export const DEMO_SECRET = 'whsec_demo_bG9jYWwtdHJpYWxzLW9ubHktbm90LWEtcmVhbC1zZWNyZXQ';

/** Options of `createExampleApp`. */
export interface ExampleOptions {
  /** Default: `WORKFORCE_WEBHOOK_SECRET`, else (unset or empty) `DEMO_SECRET`. */
  readonly secret?: string;
  /** Where the handlers report what they did. Default `console.log`. */
  readonly log?: (line: string) => void;
  /** A read-API client, handed to handlers as `ctx.api` (the demo points it at the local mock service). */
  readonly api?: ApiClient;
}

/**
 * Builds the example app: the webhook route with typed handlers, and the rest of an app that parses JSON as usual.
 * @example
 * const { app, receiver } = createExampleApp({ secret: 'whsec_test', log: (line) => lines.push(line) });
 */
export function createExampleApp({
  // `||`: a variable set but empty (`WORKFORCE_WEBHOOK_SECRET=` in a .env) is no secret, so the demo one is used.
  secret = process.env.WORKFORCE_WEBHOOK_SECRET || DEMO_SECRET,
  log = console.log,
  api,
}: ExampleOptions = {}): { readonly app: Express; readonly receiver: Receiver } {
  // #region quickstart
  // `api` (optional): a read-API client, handed to every handler as `ctx.api`.
  const receiver = createReceiver({ secret, api });

  receiver.on('leave.approved', async (event, ctx) => {
    // `event.data` is typed. Leave dates are calendar dates: keep the day as sent, never a local-zone Date.
    const { employeeId, leaveType, startDate, endDate } = event.data;
    log(
      `calendar: block ${employeeId} ${startDate.slice(0, 10)}..${endDate.slice(0, 10)} (${leaveType}, delivery ${ctx.deliveryId})`,
    );
  });
  receiver.on('leave.*', (event) => log(`audit: ${event.type} ${event.id}`));
  receiver.onAny((event) => log(`metrics: ${event.type}`));
  // Handler errors reach here (and the logs), never the HTTP answer; the attempt does not wait for this hook.
  receiver.onError((error, event) =>
    log(`error: ${event?.type ?? 'delivery'} ${event?.id ?? ''}: ${String(error)}`),
  );

  const app = express();
  // The webhook route comes before any JSON parser, so it receives the raw bytes its signature covers. `app.all`:
  // the receiver answers every method on its path (anything but POST: 405 with `Allow: POST`).
  app.all('/webhooks/workforce', createExpressMiddleware(receiver));
  app.use(express.json());
  app.get('/health', (_req, res) => {
    res.json({ ok: true });
  });
  // #endregion quickstart
  return { app, receiver };
}

// Listen only when run directly, so tests and the demo can import the factory.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const port = Number(process.env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`PORT=${process.env.PORT} is not a port: give 0 to 65535, e.g. PORT=3000`);
    process.exit(1);
  }
  const { app, receiver } = createExampleApp();
  const server = app.listen(port, (error) => {
    // Express 5 hands a failed listen here (a port in use is EADDRINUSE): say so and stop, never "listening".
    if (error) {
      // A port below 1024 needs root (EACCES): the next one would too, so 3000 is said instead.
      console.error(
        `port ${port}: ${error.message}; pick another with PORT=${port < 1024 ? 3000 : port + 1}`,
      );
      process.exit(1);
    }
    const address = server.address();
    const actual = typeof address === 'object' && address !== null ? address.port : port;
    console.log(`workforce-webhooks example listening on http://localhost:${actual}/webhooks/workforce`);
  });
  const shutdown = async (): Promise<void> => {
    // New deliveries get 503 (the sender retries them) while accepted ones finish; then the server stops.
    await receiver.close();
    server.close();
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}
