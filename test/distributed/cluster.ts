// Helpers of the multi-instance tests: start receiver processes, send deliveries like the service does, check the answers.
import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { createSignedDelivery, type SignedDelivery } from 'workforce-webhooks/testing';

const INSTANCE_SCRIPT = fileURLToPath(new URL('./instance.ts', import.meta.url));

/** A receiver process (`instance.ts`) listening on loopback. */
export interface Instance {
  readonly name: string;
  readonly url: string;
  readonly process: ChildProcess;
  /** SIGTERM (graceful: drains, then exits) or SIGKILL (a crash), and wait for the exit. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
}

/**
 * Starts `instance.ts` (or another instance script) under tsx with the given environment and waits until it listens.
 * @example
 * const a = await startInstance({ INSTANCE: 'a', QUEUE: 'bullmq', REDIS_URL, RUN_NAME, SECRET });
 */
export async function startInstance(
  env: Record<string, string>,
  script: string = INSTANCE_SCRIPT,
): Promise<Instance> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const line = output.split('\n')[0];
      if (output.includes('\n') && line) resolve((JSON.parse(line) as { port: number }).port);
    });
    child.once('exit', (code) => reject(new Error(`instance ${env.INSTANCE} exited with ${code}`)));
  });
  return {
    name: env.INSTANCE ?? '?',
    url: `http://127.0.0.1:${port}/`,
    process: child,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** Every answer one delivery got, in order, until a 2xx (the service retries anything else). */
export type Answers = (number | 'refused')[];

/**
 * Posts a delivery, and like the sender retries on a failure (refused connection, 409, 503), moving to the next
 * instance each time, with a short pause instead of the service's real schedule. Resolves with every answer.
 * @example
 * const answers = await deliverUntilAccepted(delivery, () => pick());
 */
export async function deliverUntilAccepted(
  delivery: SignedDelivery<string>,
  next: () => string,
  { pauseMs = 20, maxTries = 1000 }: { readonly pauseMs?: number; readonly maxTries?: number } = {},
): Promise<Answers> {
  const answers: Answers = [];
  for (let tries = 0; tries < maxTries; tries++) {
    try {
      const response = await fetch(next(), {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
      });
      await response.arrayBuffer();
      answers.push(response.status);
      if (response.status >= 200 && response.status < 300) return answers;
    } catch {
      answers.push('refused');
    }
    await sleep(pauseMs);
  }
  throw new Error(`delivery ${delivery.event.id} was never accepted: ${answers.join(',')}`);
}

/** One copy of an event as `deliverCopies` sent it, and every answer it got. */
export interface CopyAnswers {
  readonly id: string;
  readonly answers: Answers;
}

/**
 * Sends each event once per instance, all copies at once, copy `n` starting on the `n`-th instance after the event's
 * own and moving on at each retry, with at most `limit` deliveries in flight: the duplicates a sender's retries make.
 * @example
 * const results = await deliverCopies(ids, instances, { secret, limit: 96 });
 */
export function deliverCopies(
  ids: readonly string[],
  instances: readonly Instance[],
  { secret, limit }: { readonly secret: string; readonly limit: number },
): Promise<CopyAnswers[]> {
  const tasks = ids.flatMap((id, i) =>
    instances.map((_, copy) => async () => {
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved', id });
      let turn = i + copy;
      return {
        id,
        answers: await deliverUntilAccepted(delivery, () => instances[turn++ % instances.length]!.url),
      };
    }),
  );
  return pool(tasks, limit);
}

/**
 * Expects what `deliverCopies` should get: each event accepted (202) by exactly one copy, every other copy told it is a
 * duplicate (200), and no copy given a second 2xx.
 * @example
 * expectOneAcceptedCopy(await deliverCopies(ids, instances, { secret, limit: 48 }), ids);
 */
export function expectOneAcceptedCopy(results: readonly CopyAnswers[], ids: readonly string[]): void {
  for (const { answers } of results) {
    expect([200, 202]).toContain(answers.at(-1));
    expect(
      answers.filter((status) => typeof status === 'number' && status >= 200 && status < 300),
    ).toHaveLength(1);
  }
  const accepted = results.filter(({ answers }) => answers.at(-1) === 202).map(({ id }) => id);
  expect(accepted.sort()).toEqual([...ids].sort());
}

/**
 * Runs `tasks` with at most `limit` at once.
 * @example
 * await pool(items.map((item) => () => send(item)), 64);
 */
export async function pool<T>(tasks: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, lane));
  return results;
}
