// The examples that fall back to a demo secret do so when WORKFORCE_WEBHOOK_SECRET is empty too (a blank
// `WORKFORCE_WEBHOOK_SECRET=` line in a .env), not only when it is unset: an empty secret would start the server and
// answer every delivery 500 not_configured.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { DEMO_SECRET } from '../../examples/express/server.js';
import { eventually, expectAnswer, post } from '../contract/adapter-client.js';
import { LEAVE_APPROVED } from '../contract/adapter-dedupe.js';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { root } from '../support/packed.js';

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** Starts `path` with an empty secret variable; resolves with its webhook URL once it says its port. */
async function startWithEmptySecret(path: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', path], {
    cwd: root,
    env: { ...process.env, ...env, PORT: '0', WORKFORCE_WEBHOOK_SECRET: '' },
  });
  closers.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGKILL');
    await once(child, 'exit');
  });
  let output = '';
  const collect = (chunk: string): void => {
    output += chunk;
  };
  child.stdout.setEncoding('utf8').on('data', collect);
  child.stderr.setEncoding('utf8').on('data', collect);
  // The framework examples print their URL; the Postgres one `{"listening":<port>}`.
  const port = /localhost:(\d+)\/|"listening":(\d+)/;
  await eventually(
    () => {
      if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${output}`);
      expect(output).toMatch(port);
    },
    { tries: 1200, intervalMs: 50 },
  );
  const [, framework, postgres] = port.exec(output)!;
  return `http://127.0.0.1:${framework ?? postgres}/webhooks/workforce`;
}

/** A leave.approved signed with `secret`, answered 202 by the example at `url`. */
async function expectAccepted(url: string, secret: string): Promise<void> {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved', data: LEAVE_APPROVED });
  expectAnswer(await post(url, delivery), 202, { received: true });
}

describe('the examples with WORKFORCE_WEBHOOK_SECRET set but empty', { timeout: 120_000 }, () => {
  it.each(['examples/express/server.ts', 'examples/hono/server.ts', 'examples/fastify/server.ts'])(
    '%s verifies with the demo secret',
    async (path) => {
      await expectAccepted(await startWithEmptySecret(path), DEMO_SECRET);
    },
  );

  it.skipIf(!postgresUrl)('examples/postgres/server.ts verifies with its demo secret', async () => {
    const database = uniqueTable('empty_secret');
    await connectPostgres().query(`CREATE DATABASE ${database}`);
    const databaseUrl = new URL(postgresUrl);
    databaseUrl.pathname = `/${database}`;
    const url = await startWithEmptySecret('examples/postgres/server.ts', { DATABASE_URL: databaseUrl.href });
    await expectAccepted(url, 'whsec_demo_postgres_local_trials_only');
  });
});
