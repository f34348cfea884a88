// The Fastify quick start, whole: paste it as server.ts into an empty project and run `npx tsx server.ts`.
// #region quickstart
import Fastify from 'fastify';
import { createReceiver } from 'workforce-webhooks';
import { createFastifyPlugin } from 'workforce-webhooks/fastify';

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

const app = Fastify();
// The plugin reads raw bytes in its own scope, on every method; JSON routes elsewhere in the app parse as before.
app.register(createFastifyPlugin(receiver, { path: '/webhooks/workforce' }));
app.post('/api/echo', async (request) => request.body);

// `.then`, not a top-level await: the file also runs as pasted into a CommonJS project (what `npm init` makes).
const port = Number(process.env.PORT ?? 3000);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT=${process.env.PORT} is not a port: give 0 to 65535, e.g. PORT=3000 npx tsx server.ts`);
  process.exit(1);
}
app.listen({ port, host: '127.0.0.1' }).then(
  (address) => console.log(`listening on ${address.replace('127.0.0.1', 'localhost')}/webhooks/workforce`),
  (error: Error) => {
    // A port below 1024 needs root (EACCES): the next one would too, so 3000 is said instead.
    console.error(
      `port ${port}: ${error.message}; pick another: PORT=${port < 1024 ? 3000 : port + 1} npx tsx server.ts`,
    );
    process.exit(1);
  },
);
// On Ctrl-C or SIGTERM: 503 to new deliveries, accepted ones finish, then stop; a second Ctrl-C stops at once.
const shutdown = async (): Promise<void> => {
  process.off('SIGINT', shutdown).off('SIGTERM', shutdown);
  await receiver.close();
  await app.close();
};
process.on('SIGINT', shutdown).on('SIGTERM', shutdown);
// #endregion quickstart
