// `mock --deliver-to` against a receiver that refuses its deliveries (most often: run with another secret than the
// mock signs with): each failed attempt names the receiver's error code, and what to change is said once.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createNodeHandler } from 'workforce-webhooks/node';
import { createMockService } from 'workforce-webhooks/testing';
import { retryPrinter, runConsole } from '../../cli/mock-console.js';
import { capture } from './capture.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

/** A real receiver on loopback, verifying with `secret`. */
async function receiverAt(secret: string): Promise<string> {
  const receiver = createReceiver({ secret, logger: false }).onAny(() => {});
  cleanup.push(() => receiver.close());
  const server = createServer(createNodeHandler(receiver));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/workforce`;
}

const occurrences = (text: string, part: string): number => text.split(part).length - 1;

describe('mock --deliver-to to a receiver with another secret', () => {
  it('shows signature_mismatch on every failed attempt and says once which secret to change', async () => {
    const url = await receiverAt('whsec_the_servers_own');
    const commands = ['test', 'approve'];
    const io = capture('', {
      async *lines() {
        yield* commands;
      },
    });
    const mock = await createMockService({ retryScheduleMs: [20], onAttempt: retryPrinter(io) });
    cleanup.push(() => mock.close());
    mock.subscribe(url, { secret: 'whsec_the_mocks_own' });

    await runConsole(mock, io);
    await mock.settled();

    // Two events, each sent and retried once: four refusals.
    expect(mock.deliveries.map((d) => d.status)).toEqual([400, 400, 400, 400]);
    expect(occurrences(io.out, ': 400 signature_mismatch in ')).toBe(4);
    expect(io.out).toMatch(/attempt 2: 400 signature_mismatch in \d+ ms: failed, no retries left\n/);
    expect(
      occurrences(
        io.out,
        "   hint: the endpoint verifies with another secret than the mock signs with: run your server with WORKFORCE_WEBHOOK_SECRET set to the mock's",
      ),
    ).toBe(1);
  });
});
