// The Web contract's app, run as is by Bun, Deno and workerd: the receiver on `/webhooks/workforce`, what its handlers
// did on `/handled`. Copied into a scratch project next to the packed package, so it imports what users install.
import { createMemoryQueue, createReceiver, type FetchPlatform } from 'workforce-webhooks';

// The secret of web-contract.ts's HARNESS_SECRET, written out: a Worker module may export only handlers.
const SECRET = 'whsec_runtime_harness_R4nD0m9';

/** What `/handled` answers. */
export interface Handled {
  /** Event ids whose handler finished, in order. */
  readonly finished: string[];
  /** Attempts per event id of the handler that fails its first attempt. */
  readonly attempts: Record<string, number>;
  /** How many times the receiver handed work to the platform's waitUntil. */
  readonly waitUntilCalls: number;
}

const state: { -readonly [K in keyof Handled]: Handled[K] } = {
  finished: [],
  attempts: {},
  waitUntilCalls: 0,
};
const receiver = createReceiver({
  secret: SECRET,
  // Two slots: deliveries sent at once past them wait for one (on Workers, each in its own request's waitUntil).
  queue: createMemoryQueue({ concurrency: 2, attempts: 3, backoff: () => 20 }),
});
receiver.on('leave.approved', async (event) => {
  // Finishes well after the 202: only a live process, or the platform's waitUntil, lets it get there.
  await new Promise((resolve) => setTimeout(resolve, 300));
  state.finished.push(event.id);
});
receiver.on('employee.created', (event) => {
  const attempt = (state.attempts[event.id] ?? 0) + 1;
  state.attempts[event.id] = attempt;
  if (attempt === 1) throw new Error('the first attempt fails');
  state.finished.push(event.id);
});

export default {
  // Bun and Deno call fetch(request, server|info); Workers call fetch(request, env, ctx).
  fetch(request: Request, _env?: unknown, ctx?: FetchPlatform): Promise<Response> | Response {
    const { pathname } = new URL(request.url);
    if (pathname === '/handled') return Response.json(state);
    if (pathname !== '/webhooks/workforce') return new Response('not found', { status: 404 });
    const waitUntil = ctx?.waitUntil;
    if (waitUntil === undefined) return receiver.fetch(request);
    return receiver.fetch(request, {
      waitUntil: (work) => {
        state.waitUntilCalls++;
        waitUntil.call(ctx, work);
      },
    });
  },
};
