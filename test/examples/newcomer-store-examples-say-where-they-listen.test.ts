// The README's Redis and Postgres servers, pasted as shown and started: each says where it listens (with PORT=0 too),
// and that address takes a signed delivery.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { region } from '../../scripts/snippets.js';
import { eventually, expectAnswer, post } from '../contract/adapter-client.js';
import { LEAVE_APPROVED } from '../contract/adapter-dedupe.js';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { redisUrl } from '../setup/redis-helpers.js';
import { linkedProject } from '../support/linked-project.js';

const SECRET = 'whsec_newcomer_listens_Jd4';

// What the two sections have users install, and tsx to run the files.
const LINKS = [
  'express',
  'ioredis',
  'bullmq',
  'pg',
  '@opentelemetry/api',
  '@opentelemetry/sdk-metrics',
  '@opentelemetry/exporter-prometheus',
  'tsx',
];

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

/** Starts a pasted file with tsx and PORT=0; resolves with the webhook URL its first output line gives. */
async function start(
  cwd: string,
  file: string,
  env: NodeJS.ProcessEnv,
): Promise<{ url: string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    cwd,
    env: { ...process.env, ...env, PORT: '0', WORKFORCE_WEBHOOK_SECRET: SECRET },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  let ended = false;
  void exited.then(() => {
    ended = true;
  });
  // Generous: tsx, a connection to the backend and a migration on a loaded machine.
  await eventually(
    () => {
      expect(ended, `${file} exited: ${output}`).toBe(false);
      expect(output).toMatch(/"url":"http:\/\/localhost:\d+\/webhooks\/workforce"/);
    },
    { tries: 1200, intervalMs: 50 },
  );
  const url = /"url":"(http:\/\/localhost:\d+\/webhooks\/workforce)"/.exec(output)![1]!;
  return { url: url.replace('localhost', '127.0.0.1'), exited };
}

describe('the store examples as pasted', { timeout: 120_000 }, () => {
  let scratch = '';
  beforeAll(() => {
    scratch = linkedProject('wfwh-newcomer-listens-', 'module', LINKS);
    for (const [path, name] of [
      ['scaling/server.ts', 'scaling'],
      ['scaling/telemetry.ts', 'telemetry'],
      ['postgres/server.ts', 'postgres'],
    ] as const) {
      mkdirSync(dirname(join(scratch, path)), { recursive: true });
      writeFileSync(join(scratch, path), `${region(`examples/${path}`, name)}\n`);
    }
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it.skipIf(!redisUrl)(
    'Running several instances: says where it listens and answers a delivery there',
    async () => {
      const { url, exited } = await start(scratch, 'scaling/server.ts', { REDIS_URL: redisUrl });
      const delivery = await createSignedDelivery({
        secret: SECRET,
        type: 'leave.approved',
        data: LEAVE_APPROVED,
      });
      expectAnswer(await post(url, delivery), 202, { received: true });
      children[0]?.kill('SIGTERM');
      expect(await exited).toBe(0);
    },
  );

  it.skipIf(!postgresUrl)(
    'Running on Postgres: says where it listens and answers a delivery there',
    async () => {
      // A database of its own: the example uses the default table names.
      const database = uniqueTable('newcomer');
      await connectPostgres().query(`CREATE DATABASE ${database}`);
      const databaseUrl = new URL(postgresUrl);
      databaseUrl.pathname = `/${database}`;
      const { url, exited } = await start(scratch, 'postgres/server.ts', { DATABASE_URL: databaseUrl.href });
      const delivery = await createSignedDelivery({
        secret: SECRET,
        type: 'leave.approved',
        data: LEAVE_APPROVED,
      });
      expectAnswer(await post(url, delivery), 202, { received: true });
      children[0]?.kill('SIGTERM');
      expect(await exited).toBe(0);
    },
  );
});
