// `mock --deliver-to` to an endpoint that gives no answer at all (nothing listening, most often: the app is not started
// yet, or runs on another port): each attempt says so, and what to do about it is said once.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createMockService } from 'workforce-webhooks/testing';
import { retryPrinter, runConsole } from '../../cli/mock-console.js';
import { capture } from './capture.js';
import { type CliProcess, startCli } from './cli-process.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

/** A loopback URL nothing listens on. */
async function deadUrl(): Promise<string> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/webhooks/workforce`;
}

const occurrences = (text: string, part: string): number => text.split(part).length - 1;

describe('mock --deliver-to an endpoint where nothing listens', () => {
  it('names the cause on each failed attempt and says once what to do', async () => {
    const url = await deadUrl();
    const host = new URL(url).host;
    const io = capture('', {
      async *lines() {
        yield* ['test', 'approve'];
      },
    });
    const mock = await createMockService({ retryScheduleMs: [20], onAttempt: retryPrinter(io, url) });
    cleanup.push(() => mock.close());
    mock.subscribe(url);

    await runConsole(mock, io, url);
    await mock.settled();

    // Two events, each sent and retried once: four attempts without an answer.
    expect(mock.deliveries.map((d) => [d.status, d.code])).toEqual([
      [undefined, 'ECONNREFUSED'],
      [undefined, 'ECONNREFUSED'],
      [undefined, 'ECONNREFUSED'],
      [undefined, 'ECONNREFUSED'],
    ]);
    expect(occurrences(io.out, 'ECONNREFUSED')).toBe(4);
    expect(occurrences(io.out, `   hint: nothing listens at ${host}: start your app`)).toBe(1);
  });

  it('says it from the command line too', async () => {
    const url = await deadUrl();
    const child: CliProcess = startCli(['mock', '--port', '0', '--deliver-to', url]);
    cleanup.push(async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT');
        await once(child, 'exit');
      }
    });
    await expect.poll(child.out, { timeout: 15_000 }).toContain('type one and press Enter');
    child.stdin.write('test\n');
    await expect
      .poll(child.out, { timeout: 15_000 })
      .toContain(`   hint: nothing listens at ${new URL(url).host}: start your app`);
  });
});
