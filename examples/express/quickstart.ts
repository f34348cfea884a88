// The README quick start, whole: paste it as server.ts into an empty project and run `npx tsx server.ts`.
// #region quickstart
import express from 'express';
import { createReceiver } from 'workforce-webhooks';
import { createExpressMiddleware } from 'workforce-webhooks/express';

// The endpoint's `whsec_...` secret, from the Workforce Service's webhook settings.
const secret = process.env.WORKFORCE_WEBHOOK_SECRET;
if (!secret) {
  console.error('Set the endpoint secret: WORKFORCE_WEBHOOK_SECRET=whsec_... npx tsx server.ts');
  process.exit(1);
}

const receiver = createReceiver({ secret });

receiver.on('leave.approved', async (event, ctx) => {
  // `event.data` is typed. Leave dates are calendar dates: keep the day as sent, never a local-zone Date.
  const { employeeId, leaveType, startDate, endDate } = event.data;
  console.log(
    `calendar: block ${employeeId} ${startDate.slice(0, 10)}..${endDate.slice(0, 10)} (${leaveType}, delivery ${ctx.deliveryId})`,
  );
});
receiver.on('leave.*', (event) => console.log(`audit: ${event.type} ${event.id}`));
receiver.onAny((event) => console.log(`metrics: ${event.type}`));
// Handler errors reach here (and the logs), never the HTTP answer; the attempt does not wait for this hook.
receiver.onError((error, event) =>
  console.error(`error: ${event?.type ?? 'delivery'} ${event?.id ?? ''}: ${String(error)}`),
);

const app = express();
// Before any JSON parser, so the route gets the raw bytes the signature covers; `app.all`, so the receiver answers
// every method on its path (anything but POST: 405 with `Allow: POST`).
app.all('/webhooks/workforce', createExpressMiddleware(receiver));
app.use(express.json());
app.get('/health', (_req, res) => {
  res.json({ ok: true });
});

const port = Number(process.env.PORT ?? 3000);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT=${process.env.PORT} is not a port: give 0 to 65535, e.g. PORT=3000 npx tsx server.ts`);
  process.exit(1);
}
const server = app.listen(port, (error) => {
  // Express 5 hands a failed listen here (a port in use is EADDRINUSE): say so and stop, never "listening".
  if (error) {
    // A port below 1024 needs root (EACCES): the next one would too, so 3000 is said instead.
    console.error(
      `port ${port}: ${error.message}; pick another: PORT=${port < 1024 ? 3000 : port + 1} npx tsx server.ts`,
    );
    process.exit(1);
  }
  const address = server.address();
  const listening = typeof address === 'object' && address !== null ? address.port : port;
  console.log(`listening on http://localhost:${listening}/webhooks/workforce`);
});

// On Ctrl-C or SIGTERM: answer new deliveries 503 (the service retries them), finish accepted ones, then stop.
// A second Ctrl-C stops at once.
const shutdown = async (): Promise<void> => {
  process.off('SIGINT', shutdown).off('SIGTERM', shutdown);
  await receiver.close();
  server.close();
};
process.on('SIGINT', shutdown).on('SIGTERM', shutdown);
// #endregion quickstart
