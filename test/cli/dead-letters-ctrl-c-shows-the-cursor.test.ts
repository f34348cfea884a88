// `dead-letters replay` in a terminal, interrupted with Ctrl-C while its progress bar runs: the cursor the bar hid is
// shown again before the process ends as Ctrl-C ends it, so the shell is not left without a cursor.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { HandlerFailure, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { queuedEvent } from '../contract/queue-suite.js';
import { uniqueName } from '../setup/redis-helpers.js';
import { hasRedisServer, startRedisServer } from '../setup/redis-server.js';
import { root } from '../support/packed.js';

const HIDE_CURSOR = '\u001b[?25l';
const SHOW_CURSOR = '\u001b[?25h';
const LETTERS = 200;

describe.skipIf(!hasRedisServer())('dead-letters replay interrupted in a terminal', () => {
  it('shows the cursor again and ends as Ctrl-C ends a process', { timeout: 120_000 }, async ({
    onTestFinished,
  }) => {
    const server = await startRedisServer();
    onTestFinished(() => server.dispose());
    const name = uniqueName('ctrl-c');
    const queue = createBullmqQueue({ connection: server.url, name, attempts: 1 });
    let dead = 0;
    let allDead!: () => void;
    const buried = new Promise<void>((resolve) => {
      allDead = resolve;
    });
    queue.start({
      logger: silentLogger,
      process: async () => {
        throw new HandlerFailure([new TypeError('down')], []);
      },
      onDeadLetter: async () => {
        if (++dead === LETTERS) allDead();
      },
    });
    for (let i = 0; i < LETTERS; i++) await queue.enqueue(queuedEvent());
    await buried;
    await queue.close({ timeoutMs: 5000 });

    // A terminal (a pseudo-terminal from script(1)): standard input, output and error are all one.
    const command = `${process.execPath} --import tsx cli/index.ts dead-letters replay --redis ${server.url} --queue ${name} --yes --concurrency 1`;
    const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: root });
    onTestFinished(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let output = '';
    let paused = false;
    onTestFinished(() => server.resume());
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      // Redis goes silent as soon as the bar shows, so the replay is surely still running when Ctrl-C comes.
      if (!paused && output.includes(HIDE_CURSOR)) {
        paused = true;
        server.pause();
      }
    });
    await expect.poll(() => paused, { timeout: 60_000 }).toBe(true);
    child.stdin.write('\u0003');
    const [code] = await once(child, 'close');

    const afterBar = output.slice(output.indexOf(HIDE_CURSOR));
    expect(afterBar).toContain(SHOW_CURSOR);
    expect(output).not.toMatch(/\n\s+at /);
    // script(1) reports a child killed by SIGINT as 128 + 2.
    expect(code).toBe(130);
  });
});
