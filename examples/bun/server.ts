// The receiver on Bun, through `receiver.fetch`: `WORKFORCE_WEBHOOK_SECRET=whsec_... bun run server.ts`.
// #region bun
import { createReceiver } from 'workforce-webhooks';

const secret = process.env.WORKFORCE_WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WORKFORCE_WEBHOOK_SECRET to the endpoint secret (whsec_...)');
  process.exit(1);
}

const receiver = createReceiver({ secret });
receiver.on('leave.approved', (event) => console.log(`audit: ${event.type} ${event.id}`));

// Bun serves a default export with a `fetch` on PORT (3000 when unset). The process stays up, so queued work runs
// after the 202 without a waitUntil.
export default {
  fetch(request: Request): Promise<Response> | Response {
    if (new URL(request.url).pathname === '/webhooks/workforce') return receiver.fetch(request);
    return new Response('not found', { status: 404 });
  },
};
// #endregion bun
