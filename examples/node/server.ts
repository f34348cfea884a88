// The receiver on plain node:http, whole: paste it as server.ts into an empty project and run `npx tsx server.ts`.
// #region node
import { createServer } from 'node:http';
import { createReceiver } from 'workforce-webhooks';
import { createNodeHandler } from 'workforce-webhooks/node';

const secret = process.env.WORKFORCE_WEBHOOK_SECRET;
if (!secret) {
  console.error('Set the endpoint secret: WORKFORCE_WEBHOOK_SECRET=whsec_... npx tsx server.ts');
  process.exit(1);
}

const receiver = createReceiver({ secret });
receiver.on('leave.approved', (event) => console.log(`audit: ${event.type} ${event.id}`));

// The handler answers every path and method it is given: route to it only the webhook's path.
const webhooks = createNodeHandler(receiver);
const server = createServer((req, res) => {
  if (req.url?.split('?')[0] === '/webhooks/workforce') return webhooks(req, res);
  res.writeHead(404).end();
});
const port = Number(process.env.PORT ?? 3000);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT=${process.env.PORT} is not a port: give 0 to 65535, e.g. PORT=3000 npx tsx server.ts`);
  process.exit(1);
}
server.listen(port, () => {
  const address = server.address();
  const listening = typeof address === 'object' && address !== null ? address.port : port;
  console.log(`listening on http://localhost:${listening}/webhooks/workforce`);
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
// #endregion node
