// The receiver on Deno, through `receiver.fetch`: `WORKFORCE_WEBHOOK_SECRET=whsec_... deno serve --allow-env --allow-read server.ts`.
// #region deno
import { createReceiver } from 'workforce-webhooks';

// Deno 2 has Node's `process` global; `--allow-env` lets it read the secret.
const secret = process.env.WORKFORCE_WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WORKFORCE_WEBHOOK_SECRET to the endpoint secret (whsec_...)');
  process.exit(1);
}

const receiver = createReceiver({ secret });
receiver.on('leave.approved', (event) => console.log(`audit: ${event.type} ${event.id}`));

// `deno serve` serves a default export with a `fetch` (port 8000, or `--port`). The process stays up, so queued
// work runs after the 202 without a waitUntil.
export default {
  fetch(request: Request): Promise<Response> | Response {
    if (new URL(request.url).pathname === '/webhooks/workforce') return receiver.fetch(request);
    return new Response('not found', { status: 404 });
  },
};
// #endregion deno
