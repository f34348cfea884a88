// A test Worker on workerd (Miniflare) from a bundled source: signed deliveries to its webhook route, and its
// `GET /state` polled until a condition holds.
import { Miniflare } from 'miniflare';
import { expect, onTestFinished } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { bundleForWorkerd } from './workerd-bundle.js';

/** How {@link TestWorker.deliver} sends one delivery. */
export interface DeliverOptions {
  readonly unkept?: boolean;
  readonly status?: number;
  readonly data?: Record<string, unknown>;
}

/** A started test Worker: its Miniflare, a delivery to it, and its state once a condition holds. */
export interface TestWorker<S> {
  readonly mf: Miniflare;
  /**
   * Posts a signed delivery of `type` (with the type's sample data unless given `data`) to `/webhooks/workforce`,
   * expects `status` (202 unless told), drains the answer and gives the event's id. `unkept` adds the `x-unkept: 1`
   * header, which the test Workers read as "a request the platform ends with (or soon after) its answer".
   */
  deliver(type: string, options?: DeliverOptions): Promise<string>;
  /**
   * Polls `GET /state` every 50 ms until `done` holds or `timeoutMs` (a wide bound on a hang, 20 s unless told)
   * passed, and gives the last state read.
   */
  until(done: (state: S) => boolean, timeoutMs?: number): Promise<S>;
}

/**
 * Bundles `source` for workerd, starts it in Miniflare (disposed when the test finishes) and gives a {@link TestWorker}
 * signing its deliveries with `secret`.
 * @example
 * const worker = await startTestWorker<State>(WORKER, secret);
 * const id = await worker.deliver('leave.approved', { unkept: true });
 * expect(await worker.until((state) => state.settled === 1)).toMatchObject({ finished: [id] });
 */
export async function startTestWorker<S>(source: string, secret: string): Promise<TestWorker<S>> {
  const mf = new Miniflare({
    modules: true,
    script: await bundleForWorkerd(source),
    compatibilityDate: '2026-04-01',
  });
  onTestFinished(() => mf.dispose());
  await mf.ready;
  const read = async (): Promise<S> => (await (await mf.dispatchFetch('http://worker/state')).json()) as S;
  return {
    mf,
    async deliver(type, { unkept = false, status = 202, data } = {}) {
      const delivery = await createSignedDelivery({ secret, type, data });
      const response = await mf.dispatchFetch('http://worker/webhooks/workforce', {
        method: 'POST',
        headers: unkept ? { ...delivery.headers, 'x-unkept': '1' } : delivery.headers,
        body: delivery.body,
      });
      expect(response.status).toBe(status);
      await response.arrayBuffer();
      return delivery.event.id;
    },
    async until(done, timeoutMs = 20_000) {
      let state = await read();
      const deadline = Date.now() + timeoutMs;
      while (!done(state) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        state = await read();
      }
      return state;
    },
  };
}
