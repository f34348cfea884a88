// The quick starts run in a terminal: Ctrl-C (SIGINT) drains like SIGTERM (503 to new deliveries, accepted ones
// finish, exit 0), and a second Ctrl-C while the drain waits stops the process at once.
import { once } from 'node:events';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { eventually, expectAnswer, post } from '../contract/adapter-client.js';
import { LEAVE_APPROVED } from '../contract/adapter-dedupe.js';
import { startExample } from '../support/example-process.js';

const SECRET = 'whsec_quickstart_ctrl_c_Q7';
const env = { ...process.env, WORKFORCE_WEBHOOK_SECRET: SECRET };

// The files the README's framework quick starts and its node:http section are taken from.
const QUICKSTARTS = [
  'examples/express/quickstart.ts',
  'examples/hono/quickstart.ts',
  'examples/fastify/quickstart.ts',
  'examples/node/server.ts',
];

/** Resolves once nothing accepts connections on `port` any more (the server was closed). */
const refused = (port: number): Promise<void> =>
  new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      reject(new Error(`port ${port} still accepts connections`));
    });
    socket.once('error', (error: NodeJS.ErrnoException) =>
      error.code === 'ECONNREFUSED' ? resolve() : reject(error),
    );
  });

describe('the quick starts on Ctrl-C', { timeout: 120_000 }, () => {
  it.each(QUICKSTARTS)('%s drains on Ctrl-C and exits 0', async (path) => {
    const { url, output, child } = await startExample(path, { env });
    const delivery = await createSignedDelivery({
      secret: SECRET,
      type: 'leave.approved',
      data: LEAVE_APPROVED,
    });
    expectAnswer(await post(url, delivery), 202, { received: true });
    await eventually(() => expect(output()).toContain(`leave.approved ${delivery.event.id}`), {
      tries: 600,
      intervalMs: 50,
    });

    child.kill('SIGINT');
    const [code, signal] = await once(child, 'exit');

    // Ended by its own shutdown, not killed by the signal.
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(output()).not.toMatch(/Error|at .*\.ts:\d+/);
  });

  it.each(QUICKSTARTS)(
    '%s stops at once on a second Ctrl-C while a request holds the drain',
    async (path) => {
      const { url, child } = await startExample(path, { env });
      const port = Number(new URL(url).port);
      // A client that sent half its headers: the server waits for it (up to Node's headersTimeout) before it closes.
      const slow = connect(port, '127.0.0.1');
      await once(slow, 'connect');
      slow.write('POST /webhooks/workforce HTTP/1.1\r\nHost: localhost\r\n');
      slow.on('error', () => {});

      child.kill('SIGINT');
      // The first Ctrl-C closed the listener; the half-sent request keeps the process draining.
      await eventually(() => refused(port), { tries: 600, intervalMs: 50 });
      expect({ code: child.exitCode, signal: child.signalCode }).toEqual({ code: null, signal: null });

      child.kill('SIGINT');
      const [code, signal] = await once(child, 'exit');
      slow.destroy();

      // Killed by the second Ctrl-C, not waiting out the half-sent request.
      expect({ code, signal }).toEqual({ code: null, signal: 'SIGINT' });
    },
  );
});
