// `send` answered 503 queue_unavailable: the hint names what it can be for whichever queue the receiver uses (BullMQ's
// Redis, or a queue of the app's own whose enqueue failed), and sends to the server's log.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryQueue, createReceiver, type EventQueue } from 'workforce-webhooks';
import { createNodeHandler } from 'workforce-webhooks/node';
import { runCli } from '../../cli/run.js';
import { capture } from './capture.js';

const SECRET = 'whsec_send_queue_unavailable';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

// A queue of the app's own (one on a cloud queue service, say) whose service cannot be reached: enqueue rejects.
function unreachableQueue(): EventQueue {
  const held = createMemoryQueue();
  return {
    start: (hooks) => held.start(hooks),
    enqueue: async () => {
      throw new Error('connect ETIMEDOUT queue.internal:443');
    },
    deadLetters: (query) => held.deadLetters(query),
    replay: (id, options) => held.replay(id, options),
    discard: (id, options) => held.discard(id, options),
    close: (options) => held.close(options),
  };
}

describe('send answered 503 queue_unavailable', () => {
  it("by a receiver on a queue of the app's own, does not blame BullMQ's Redis, and points to the server's log", async () => {
    const receiver = createReceiver({ secret: SECRET, queue: unreachableQueue(), logger: false }).onAny(
      () => {},
    );
    closers.push(() => receiver.close());
    const server = createServer(createNodeHandler(receiver));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(resolve)));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/workforce`;

    const io = capture('', { env: { WORKFORCE_WEBHOOK_SECRET: SECRET } });
    const code = await runCli(['send', '--url', url, '--type', 'leave.approved'], io);

    expect(io.out).toMatch(/^HTTP 503 .*\n\{"error":"queue_unavailable"\}\n$/);
    expect(io.err).not.toContain("queue (BullMQ's Redis) is unreachable");
    expect(io.err).toContain('with BullMQ, is its Redis running');
    expect(io.err).toContain('With a queue of your own, see what its enqueue rejected with');
    expect(io.err).toContain("The server's log has the error");
    expect(code).toBe(1);
  });
});
