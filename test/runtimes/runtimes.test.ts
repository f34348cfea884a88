// Bun, Deno and Cloudflare's workerd (through Miniflare) run the packed package: the Web contract on each, then the
// README's example for each runtime, served as the README says.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { eventually } from '../contract/adapter-client.js';
import { LEAVE_APPROVED } from '../contract/adapter-dedupe.js';
import { freePort } from '../support/free-port.js';
import { root, scratchProject } from '../support/packed.js';
import type { Handled } from './harness.js';
import { type Dispatch, describeWebContract, HARNESS_SECRET } from './web-contract.js';

const EXAMPLE_SECRET = 'whsec_runtime_example_Xy8pQ3';
const bin = (name: string): string => join(root, 'node_modules', '.bin', name);

let scratch: Promise<string> | undefined;
/** One scratch project for every runtime: the packed package, the harness and the runtime examples. */
function project(): Promise<string> {
  scratch ??= (async () => {
    const dir = await scratchProject('runtimes', []);
    copyFileSync(join(root, 'test', 'runtimes', 'harness.ts'), join(dir, 'harness.ts'));
    for (const example of ['bun/server.ts', 'deno/server.ts', 'workers/worker.ts']) {
      mkdirSync(join(dir, example, '..'), { recursive: true });
      copyFileSync(join(root, 'examples', example), join(dir, example));
    }
    return dir;
  })();
  return scratch;
}

/** A runtime's server process on a free port, ready once its `ready` path answers. */
async function serve(
  command: (port: number) => { file: string; args: string[]; env?: NodeJS.ProcessEnv },
  readyPath: string,
): Promise<{ dispatch: Dispatch; output: () => string; stop: () => Promise<void> }> {
  const cwd = await project();
  const port = await freePort();
  const { file, args, env = {} } = command(port);
  const child: ChildProcess = spawn(file, args, {
    cwd,
    env: { ...process.env, DENO_DIR: join(cwd, '.deno'), DENO_NO_UPDATE_CHECK: '1', ...env },
  });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const dispatch: Dispatch = (path, init) =>
    fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(15_000), ...init });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await once(child, 'exit');
  };
  try {
    await eventually(
      async () => {
        expect(child.exitCode, output).toBeNull();
        expect((await dispatch(readyPath, { method: 'GET' })).status).toBeGreaterThan(0);
      },
      { tries: 600, intervalMs: 100 },
    );
  } catch (error) {
    await stop();
    throw new Error(`${file} ${args.join(' ')} did not serve: ${String(error)}\n${output}`);
  }
  return { dispatch, output: () => output, stop };
}

/** What every runtime example must do: 202 for a delivery, 200 duplicate for its copy, 400 for a forgery. */
async function expectExampleServes(dispatch: Dispatch, output?: () => string): Promise<void> {
  const delivery = await createSignedDelivery({
    secret: EXAMPLE_SECRET,
    type: 'leave.approved',
    data: LEAVE_APPROVED,
  });
  const post = (body: string, headers: Record<string, string>) =>
    dispatch('/webhooks/workforce', { method: 'POST', headers, body });
  expect((await post(delivery.body, delivery.headers)).status).toBe(202);
  const again = await post(delivery.body, delivery.headers);
  expect([again.status, await again.json()]).toEqual([200, { received: true, duplicate: true }]);
  const forged = await createSignedDelivery({
    secret: 'whsec_attacker',
    type: 'leave.approved',
    data: LEAVE_APPROVED,
  });
  expect((await post(forged.body, forged.headers)).status).toBe(400);
  if (output !== undefined)
    await eventually(() => expect(output()).toContain(`audit: leave.approved ${delivery.event.id}`), {
      tries: 200,
      intervalMs: 50,
    });
}

describe('Bun', { timeout: 120_000 }, () => {
  let server: Awaited<ReturnType<typeof serve>> | undefined;
  beforeAll(async () => {
    // Bun serves a module's default `{ fetch }` on PORT.
    server = await serve(
      (port) => ({ file: bin('bun'), args: ['run', 'harness.ts'], env: { PORT: String(port) } }),
      '/handled',
    );
  }, 600_000);
  afterAll(() => server?.stop());
  describeWebContract('Bun', () => server!.dispatch, { waitUntil: false });

  it('serves examples/bun/server.ts as the README runs it', async () => {
    const example = await serve(
      (port) => ({
        file: bin('bun'),
        args: ['run', 'bun/server.ts'],
        env: { PORT: String(port), WORKFORCE_WEBHOOK_SECRET: EXAMPLE_SECRET },
      }),
      '/',
    );
    try {
      await expectExampleServes(example.dispatch, example.output);
    } finally {
      await example.stop();
    }
  });
});

describe('Deno', { timeout: 120_000 }, () => {
  let server: Awaited<ReturnType<typeof serve>> | undefined;
  beforeAll(async () => {
    server = await serve(
      (port) => ({
        file: bin('deno'),
        args: ['serve', '--allow-env', '--allow-read', '--port', String(port), 'harness.ts'],
      }),
      '/handled',
    );
  }, 600_000);
  afterAll(() => server?.stop());
  describeWebContract('Deno', () => server!.dispatch, { waitUntil: false });

  it('serves examples/deno/server.ts as the README runs it', async () => {
    const example = await serve(
      (port) => ({
        file: bin('deno'),
        args: ['serve', '--allow-env', '--allow-read', '--port', String(port), 'deno/server.ts'],
        env: { WORKFORCE_WEBHOOK_SECRET: EXAMPLE_SECRET },
      }),
      '/',
    );
    try {
      await expectExampleServes(example.dispatch, example.output);
    } finally {
      await example.stop();
    }
  });
});

/** Bundles a Worker as wrangler does: workerd's conditions, so `#crypto` takes its Web Crypto default. */
async function bundleWorker(entry: string): Promise<string> {
  const cwd = await project();
  const result = await build({
    absWorkingDir: cwd,
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

function worker(script: string, bindings: Record<string, string> = {}): Miniflare {
  return new Miniflare({ modules: true, script, compatibilityDate: '2026-04-01', bindings });
}

describe('Cloudflare Workers (workerd through Miniflare)', { timeout: 120_000 }, () => {
  let mf: Miniflare | undefined;
  let script = '';
  beforeAll(async () => {
    script = await bundleWorker('harness.ts');
    mf = worker(script);
    await mf.ready;
  }, 600_000);
  afterAll(() => mf?.dispose());

  it('bundles the Web Crypto backend, never node:crypto', () => {
    expect(script).not.toMatch(/node:crypto/);
    expect(script).toContain('crypto.subtle');
  });

  describeWebContract(
    'workerd',
    () => async (path, init) =>
      (await mf!.dispatchFetch(`http://localhost${path}`, init as never)) as unknown as Response,
    { waitUntil: true },
  );

  it("runs deliveries sent at once past the queue's concurrency to their end, each once", async () => {
    // Six at once through the harness's two slots: four wait for a slot, and each must start in its own request
    // (workerd ends a request's timers with it: one started in the request that freed the slot never finished).
    const deliveries = await Promise.all(
      Array.from({ length: 6 }, () =>
        createSignedDelivery({ secret: HARNESS_SECRET, type: 'leave.approved', data: LEAVE_APPROVED }),
      ),
    );
    const statuses = await Promise.all(
      deliveries.map(async ({ headers, body }) => {
        const response = await mf!.dispatchFetch('http://localhost/webhooks/workforce', {
          method: 'POST',
          headers,
          body,
        });
        await response.arrayBuffer();
        return response.status;
      }),
    );
    expect(statuses).toEqual(deliveries.map(() => 202));
    const ids = deliveries.map((delivery) => delivery.event.id);
    const finished = async (): Promise<string[]> => {
      const state = (await (await mf!.dispatchFetch('http://localhost/handled')).json()) as Handled;
      return state.finished.filter((id) => ids.includes(id)).sort();
    };
    // The handlers take 300 ms each, two at a time: a wide bound on a hang.
    await eventually(async () => expect(await finished()).toEqual([...ids].sort()), {
      tries: 600,
      intervalMs: 100,
    });
  });

  it('serves examples/workers/worker.ts with its secret from env', async () => {
    const example = worker(await bundleWorker('workers/worker.ts'), {
      WORKFORCE_WEBHOOK_SECRET: EXAMPLE_SECRET,
    });
    try {
      await expectExampleServes(
        async (path, init) =>
          (await example.dispatchFetch(`http://localhost${path}`, init as never)) as unknown as Response,
      );
    } finally {
      await example.dispose();
    }
  });
});
