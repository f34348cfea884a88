// Hono on Workers handed `{ waitUntil: ctx.waitUntil }` (the method without its context) or a context without one: the
// accepted delivery is still answered 202 with the receiver's JSON, the work still runs, and the fix is said once.
import { type Context, Hono } from 'hono';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createHonoHandler } from 'workforce-webhooks/hono';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { eventually } from '../contract/adapter-client.js';
import { recordingLogger } from '../support/logger.js';

const SECRET = 'whsec_first_hour_hono_ctx_Jm3';
const URL_ = 'https://worker.example/webhooks/workforce';

// Like Workers' ExecutionContext, its waitUntil works only when called on the context itself.
class BoundContext {
  readonly #kept: Promise<unknown>[] = [];
  waitUntil(promise: Promise<unknown>): void {
    this.#kept.push(promise);
  }
  passThroughOnException(): void {}
  readonly props = {};
}

function app(
  logger: ReturnType<typeof recordingLogger>,
  perRequest: boolean,
): { app: Hono; handled: string[] } {
  const receiver = createReceiver({ secret: SECRET, logger });
  onTestFinished(() => receiver.close());
  const handled: string[] = [];
  receiver.on('leave.approved', (event) => {
    handled.push(event.id);
  });
  // Per request is how the README builds it on Workers, around the isolate's receiver.
  const handler = perRequest ? (c: Context) => createHonoHandler(receiver)(c) : createHonoHandler(receiver);
  return { app: new Hono().all('/webhooks/workforce', handler), handled };
}

describe('hono with an execution context whose waitUntil throws', () => {
  const ctx = new BoundContext();
  const detached = { waitUntil: ctx.waitUntil, passThroughOnException() {}, props: {} };
  for (const [name, executionCtx, perRequest] of [
    ['the method taken off the context', detached, false],
    ['a context without waitUntil', { passThroughOnException() {}, props: {} }, false],
    ['the method taken off the context, a handler made per request', detached, true],
  ] as const) {
    it(`answers 202 {"received":true}, runs the handler and says the fix once (${name})`, async () => {
      const logger = recordingLogger();
      const { app: hono, handled } = app(logger, perRequest);
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) {
        const delivery = await createSignedDelivery({ secret: SECRET, type: 'leave.approved' });
        ids.push(delivery.event.id);
        const response = await hono.fetch(delivery.toRequest(URL_), {}, executionCtx as never);
        expect(response.status).toBe(202);
        expect(await response.json()).toEqual({ received: true });
      }
      await eventually(() => expect(handled).toEqual(ids));
      const said = logger.lines.filter((line) => line.level === 'warn' || line.level === 'error');
      expect(said).toHaveLength(1);
      expect(said[0]!.level).toBe('warn');
      expect(said[0]!.msg).toContain('app.fetch(request, env, ctx), not { waitUntil: ctx.waitUntil }');
    });
  }
});
