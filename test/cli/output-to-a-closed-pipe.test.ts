// The CLI piped into a reader that leaves early (`check ... | head -1`): no EPIPE crash or stack trace; the command
// finishes and exits with its own code.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createNodeHandler } from 'workforce-webhooks/node';
import { startCli } from './cli-process.js';

const SECRET = 'whsec_closed_pipe';
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe('output to a pipe whose reader is gone', { timeout: 60_000 }, () => {
  it('check still runs every check and exits with its own code, without a stack trace', async () => {
    const deliveries: string[] = [];
    const receiver = createReceiver({ secret: SECRET, logger: false }).onAny((event) => {
      deliveries.push(event.type);
    });
    closers.push(() => receiver.close());
    const server = createServer(createNodeHandler(receiver));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise((resolve) => server.close(resolve)));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/workforce`;

    const child = startCli(['check', '--url', url], { ...process.env, WORKFORCE_WEBHOOK_SECRET: SECRET });
    child.stdin.end();
    // The reader leaves before the table is written, as `head` does once it has its lines.
    child.stdout.destroy();
    const [code, signal] = await once(child, 'close');

    expect(child.err()).not.toMatch(/EPIPE|Unhandled|\n\s+at /);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    // The progress on stderr, still open, went on to the last check.
    expect(child.err()).toMatch(/\[6\/7\] no redirect for .* \.\.\. 202 in \d+ ms/);
  });
});
