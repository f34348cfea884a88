// `check` interrupted with Ctrl-C while a check waits for its answer: the open progress line ("[1/6] ... ") is ended
// before the process ends as Ctrl-C ends it, so the shell's prompt starts on a line of its own.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startCli } from './cli-process.js';

describe('check interrupted', () => {
  it('ends the open progress line, then ends as Ctrl-C ends it', { timeout: 120_000 }, async ({
    onTestFinished,
  }) => {
    // An endpoint that takes each delivery and never answers: each check waits out its 10 s for it.
    const server = createServer(() => {});
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    onTestFinished(() => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/workforce`;
    const child = startCli(['check', '--url', url, '--secret', 'whsec_ctrl_c_check']);
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    await expect.poll(() => child.err(), { timeout: 60_000 }).toMatch(/\[1\/\d+\] .* \.\.\. $/);

    child.kill('SIGINT');
    const [code, signal] = await once(child, 'exit');

    expect(child.err()).toMatch(/\[\d+\/\d+\] .* \.\.\. interrupted\n$/);
    expect(child.err()).not.toMatch(/\n\s+at /);
    expect({ code, signal }).toEqual({ code: null, signal: 'SIGINT' });
  });
});
