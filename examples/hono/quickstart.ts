// The Hono quick start, whole: paste it as server.ts into an empty project and run `npx tsx server.ts`.
// #region quickstart
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createReceiver } from 'workforce-webhooks';
import { createHonoHandler } from 'workforce-webhooks/hono';

const secret = process.env.WORKFORCE_WEBHOOK_SECRET;
if (!secret) {
  console.error('Set the endpoint secret: WORKFORCE_WEBHOOK_SECRET=whsec_... npx tsx server.ts');
  process.exit(1);
}

const receiver = createReceiver({ secret });
receiver.on('leave.approved', (event) => {
  // Leave dates are calendar dates: keep the day as sent, never a local-zone Date.
  const { employeeId, startDate, endDate } = event.data;
  console.log(`calendar: block ${employeeId} ${startDate.slice(0, 10)}..${endDate.slice(0, 10)}`);
});
receiver.onAny((event) => console.log(`audit: ${event.type} ${event.id}`));

const app = new Hono();
// No validator or body-reading middleware on this route: Hono caches the first read of a body, and a
// `c.req.json()` before the handler leaves only re-serialised JSON, which no signature covers.
app.all('/webhooks/workforce', createHonoHandler(receiver)); // every method: 405 but for POST
app.post('/api/echo', async (c) => c.json(await c.req.json()));

const port = Number(process.env.PORT ?? 3000);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT=${process.env.PORT} is not a port: give 0 to 65535, e.g. PORT=3000 npx tsx server.ts`);
  process.exit(1);
}
const server = serve({ fetch: app.fetch, port }, (info) => {
  console.log(`listening on http://localhost:${info.port}/webhooks/workforce`);
});
server.on('error', (error: NodeJS.ErrnoException) => {
  // Only a failed listen (a port in use is EADDRINUSE) is about the port: a later error is said as it is.
  if (error.syscall !== 'listen') return console.error(`server: ${error.message}`);
  // A port below 1024 needs root (EACCES): the next one would too, so 3000 is said instead.
  console.error(
    `port ${port}: ${error.message}; pick another: PORT=${port < 1024 ? 3000 : port + 1} npx tsx server.ts`,
  );
  process.exit(1);
});
// On Ctrl-C or SIGTERM: 503 to new deliveries, accepted ones finish, then stop; a second Ctrl-C stops at once.
const shutdown = async (): Promise<void> => {
  process.off('SIGINT', shutdown).off('SIGTERM', shutdown);
  await receiver.close();
  server.close();
};
process.on('SIGINT', shutdown).on('SIGTERM', shutdown);
// #endregion quickstart
