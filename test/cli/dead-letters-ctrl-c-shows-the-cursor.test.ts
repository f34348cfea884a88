// `dead-letters replay` in a terminal, interrupted with Ctrl-C while its progress bar runs: the cursor the bar hid is
// shown again before the process ends as Ctrl-C ends it, so the shell is not left without a cursor.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it, type OnTestFinishedHandler } from 'vitest';
import { HandlerFailure, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { queuedEvent } from '../contract/queue-suite.js';
import { uniqueName } from '../setup/redis-helpers.js';
import { hasRedisServer, type RedisServer, startRedisServer } from '../setup/redis-server.js';
import { root } from '../support/packed.js';

const HIDE_CURSOR = '\u001b[?25l';
const SHOW_CURSOR = '\u001b[?25h';
const LETTERS = 200;

// Loaded before the CLI: the process is held up for 2 s right after the bar hid the cursor, as a loaded machine may
// hold it, so the Ctrl-C sent on seeing the bar reaches it before anything the CLI does next.
const HELD_AFTER_HIDING = `data:text/javascript,${encodeURIComponent(`
const write = process.stderr.write.bind(process.stderr);
process.stderr.write = (chunk, ...rest) => {
  const written = write(chunk, ...rest);
  if (String(chunk).includes("\\u001b[?25l")) Atomics.wait(new Int32Array(new SharedArrayBuffer(4), 0, 1), 0, 0, 2000);
  return written;
};`)}`;

// A Redis holding `count` dead letters of a queue of its own; resolves with the queue's name.
async function buried(server: RedisServer, count: number): Promise<string> {
  const name = uniqueName('ctrl-c');
  const queue = createBullmqQueue({ connection: server.url, name, attempts: 1 });
  let dead = 0;
  let allDead!: () => void;
  const done = new Promise<void>((resolve) => {
    allDead = resolve;
  });
  queue.start({
    logger: silentLogger,
    process: async () => {
      throw new HandlerFailure([new TypeError('down')], []);
    },
    onDeadLetter: async () => {
      if (++dead === count) allDead();
    },
  });
  for (let i = 0; i < count; i++) await queue.enqueue(queuedEvent());
  await done;
  await queue.close({ timeoutMs: 5000 });
  return name;
}

// `dead-letters replay` of queue `name` in a terminal (a pseudo-terminal from script(1): standard input, output and
// error are all one), with `preload` loaded first; Redis goes silent as soon as the bar shows, so the replay is surely
// still running when Ctrl-C comes. Ctrl-C is typed `whenShown` (at once) or once the test saw Redis paused.
async function interrupted(
  server: RedisServer,
  name: string,
  onTestFinished: (handler: OnTestFinishedHandler) => void,
  { preload, whenShown }: { readonly preload?: string; readonly whenShown: boolean },
): Promise<{ output: string; code: unknown }> {
  const imports = preload === undefined ? '' : ` --import '${preload.replaceAll("'", '%27')}'`;
  const command = `${process.execPath}${imports} --import tsx cli/index.ts dead-letters replay --redis ${server.url} --queue ${name} --yes --concurrency 1`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: root });
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let output = '';
  let paused = false;
  onTestFinished(() => server.resume());
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
    if (!paused && output.includes(HIDE_CURSOR)) {
      paused = true;
      server.pause();
      if (whenShown) child.stdin.write('\u0003');
    }
  });
  await expect.poll(() => paused, { timeout: 60_000 }).toBe(true);
  if (!whenShown) child.stdin.write('\u0003');
  const [code] = await once(child, 'close');
  return { output, code };
}

describe.skipIf(!hasRedisServer())('dead-letters replay interrupted in a terminal', () => {
  it('shows the cursor again and ends as Ctrl-C ends a process', { timeout: 120_000 }, async ({
    onTestFinished,
  }) => {
    const server = await startRedisServer();
    onTestFinished(() => server.dispose());
    const name = await buried(server, LETTERS);

    const { output, code } = await interrupted(server, name, onTestFinished, { whenShown: false });

    const afterBar = output.slice(output.indexOf(HIDE_CURSOR));
    expect(afterBar).toContain(SHOW_CURSOR);
    expect(output).not.toMatch(/\n\s+at /);
    // script(1) reports a child killed by SIGINT as 128 + 2.
    expect(code).toBe(130);
  });

  it('shows the cursor again when Ctrl-C comes the moment the bar hides it', { timeout: 120_000 }, async ({
    onTestFinished,
  }) => {
    const server = await startRedisServer();
    onTestFinished(() => server.dispose());
    const name = await buried(server, 20);

    const { output, code } = await interrupted(server, name, onTestFinished, {
      preload: HELD_AFTER_HIDING,
      whenShown: true,
    });

    // Ctrl-C was handled, not the default end of the process: the cursor is back and the interruption said.
    const afterBar = output.slice(output.indexOf(HIDE_CURSOR));
    expect(afterBar).toContain(SHOW_CURSOR);
    expect(afterBar).toMatch(/stopping: waiting for the replays under way/);
    expect(output).not.toMatch(/\n\s+at /);
    expect(code).toBe(130);
  });
});
