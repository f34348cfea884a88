// Runs an example as users do (`tsx examples/<x>/server.ts` with PORT=0), sends it a delivery, stops it with SIGTERM.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { once } from 'node:events';
import { expect, it, onTestFinished } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { eventually, expectAnswer, post } from '../contract/adapter-client.js';
import { LEAVE_APPROVED } from '../contract/adapter-dedupe.js';
import { root } from './packed.js';

/** A started example: its webhook URL, everything it printed so far, and its process. */
export interface StartedExample {
  readonly url: string;
  readonly output: () => string;
  readonly child: ChildProcessWithoutNullStreams;
}

/**
 * Starts a server file with tsx (PORT=0, as users run it) and resolves once it prints where it listens; killed after
 * the test if still running.
 * @example
 * const { url, output, child } = await startExample('express/quickstart.ts', { cwd: scratch, env });
 */
export async function startExample(
  path: string,
  { cwd = root, env = process.env }: { readonly cwd?: string; readonly env?: NodeJS.ProcessEnv } = {},
): Promise<StartedExample> {
  const child = spawn(process.execPath, ['--import', 'tsx', path], { cwd, env: { ...env, PORT: '0' } });
  let output = '';
  const collect = (chunk: string): void => {
    output += chunk;
  };
  child.stdout.setEncoding('utf8').on('data', collect);
  child.stderr.setEncoding('utf8').on('data', collect);
  onTestFinished(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await once(child, 'exit');
  });
  await eventually(() => expect(output).toMatch(/listening on http:\/\/localhost:\d+\//), {
    tries: 600,
    intervalMs: 50,
  });
  const port = /localhost:(\d+)\//.exec(output)![1];
  return { url: `http://127.0.0.1:${port}/webhooks/workforce`, output: () => output, child };
}

/**
 * Registers the test that an example listens on PORT when run directly, with its embedded demo secret, handles a
 * signed delivery, and exits 0 on SIGTERM after draining.
 * @example
 * itRunsDirectly('examples/hono/server.ts', DEMO_SECRET);
 */
export function itRunsDirectly(path: string, demoSecret: string): void {
  it('listens on PORT when run directly and shuts down cleanly on SIGTERM', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.WORKFORCE_WEBHOOK_SECRET;
    const { url, output, child } = await startExample(path, { env });
    try {
      const delivery = await createSignedDelivery({
        secret: demoSecret,
        type: 'leave.approved',
        data: LEAVE_APPROVED,
      });
      const answer = await post(url, delivery);
      expectAnswer(answer, 202, { received: true });
      await eventually(() => expect(output()).toContain(`audit: leave.approved ${delivery.event.id}`));
    } finally {
      child.kill('SIGTERM');
    }
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });
}

/**
 * What every example must do with a delivery: 202 for it, 200 duplicate for its copy, 400 for a forgery of it.
 * Resolves with the delivery, so the caller can check what the handlers made of it.
 * @example
 * const delivery = await expectValidCopyAndForgery(mounted.url, SECRET);
 */
export async function expectValidCopyAndForgery(
  url: string,
  secret: string,
): Promise<Awaited<ReturnType<typeof createSignedDelivery<'leave.approved'>>>> {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved', data: LEAVE_APPROVED });
  expectAnswer(await post(url, delivery), 202, { received: true });
  expectAnswer(await post(url, delivery), 200, { received: true, duplicate: true });
  const forged = await createSignedDelivery({
    secret: 'whsec_attacker',
    type: 'leave.approved',
    data: LEAVE_APPROVED,
  });
  expectAnswer(await post(url, forged), 400, { error: 'signature_mismatch' });
  return delivery;
}
