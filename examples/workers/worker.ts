// The receiver on Cloudflare Workers, through `receiver.fetch`; `ctx.waitUntil` keeps queued work alive past the 202.
// #region workers
import { createReceiver, type FetchPlatform, type Receiver } from 'workforce-webhooks';

/** The Worker's bindings: `wrangler secret put WORKFORCE_WEBHOOK_SECRET`. */
interface Env {
  readonly WORKFORCE_WEBHOOK_SECRET: string;
}

// The secret lives in `env`, which a Worker first sees in a request: build the receiver once per isolate, then.
let receiver: Receiver | undefined;

function receiverFor(env: Env): Receiver {
  if (receiver !== undefined) return receiver;
  receiver = createReceiver({ secret: env.WORKFORCE_WEBHOOK_SECRET });
  receiver.on('leave.approved', (event) => console.log(`audit: ${event.type} ${event.id}`));
  return receiver;
}

export default {
  // `ctx` is the Worker's ExecutionContext; the receiver hands it the queued work (`ctx.waitUntil`).
  fetch(request: Request, env: Env, ctx: FetchPlatform): Promise<Response> | Response {
    if (new URL(request.url).pathname === '/webhooks/workforce') return receiverFor(env).fetch(request, ctx);
    return new Response('not found', { status: 404 });
  },
};
// #endregion workers
