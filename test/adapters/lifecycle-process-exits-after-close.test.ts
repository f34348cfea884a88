// After close() resolves, nothing the package made keeps the event loop alive: a process that closes its receiver
// (and its own clients) and never calls process.exit ends by itself, on every store, queue and mode. A timer, socket
// or interval left behind is a deploy that never finishes.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { redisUrl, uniqueName } from '../setup/redis-helpers.js';

// The child: a receiver on the setup's store and queue takes three deliveries, waits for them (or, with HANG, for
// handlers that never settle and ignore their signal), closes, closes its own clients, and returns.
const CHILD = `
import { Redis } from 'ioredis';
import pg from 'pg';
import { createPostgresBackend } from 'bullmq';
import { createReceiver, silentLogger } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';

const { STORE, QUEUE, MODE, ORDERING, HANG, NAME, REDIS_URL, PG_URL } = process.env;
const secret = 'whsec_lifecycle_exit';
const client = STORE === 'redis' || QUEUE === 'bullmq' ? new Redis(REDIS_URL, { maxRetriesPerRequest: 1 }) : undefined;
const pool = STORE === 'postgres' ? new pg.Pool({ connectionString: PG_URL, max: 4 }) : undefined;
const store =
  STORE === 'redis' ? createRedisStore({ client, prefix: NAME + ':' })
  : STORE === 'postgres' ? createPostgresStore({ pool, table: NAME })
  : undefined;
if (store?.migrate) await store.migrate();
const queue =
  QUEUE === 'bullmq' ? createBullmqQueue({ connection: client, name: NAME })
  : QUEUE === 'bullmq-postgres'
    ? createBullmqQueue({ backend: createPostgresBackend, connection: { connectionString: PG_URL, migrate: true, max: 4 }, name: NAME })
  : undefined;
const receiver = createReceiver({
  secret,
  mode: MODE,
  logger: silentLogger,
  ...(store ? { store } : {}),
  ...(queue ? { queue } : {}),
  ...(ORDERING === '1' ? { ordering: { key: (event) => event.data.leaveRequestId } } : {}),
  ackDeadlineMs: 200,
});
let started = 0;
let done = 0;
receiver.on('leave.approved', async () => {
  started++;
  if (HANG === '1') await new Promise(() => {});
  done++;
});
for (let i = 0; i < 3; i++) {
  const delivery = await createSignedDelivery({ secret, type: 'leave.approved', data: { leaveRequestId: crypto.randomUUID() } });
  const answer = await receiver.handle({ method: 'POST', headers: delivery.headers, body: delivery.body });
  if (answer.status >= 300) throw new Error('answered ' + answer.status);
}
while ((HANG === '1' ? started : done) < 3) await new Promise((resolve) => setTimeout(resolve, 10));
await receiver.close({ timeoutMs: 2000 });
store?.close?.();
await client?.quit();
await pool?.end();
console.log('closed');
`;

type Setup = {
  readonly STORE: 'memory' | 'redis' | 'postgres';
  readonly QUEUE: 'memory' | 'bullmq' | 'bullmq-postgres';
  readonly MODE: 'queue' | 'inline';
  readonly ORDERING?: '1';
  readonly HANG?: '1';
};

const SETUPS: readonly Setup[] = [
  { STORE: 'memory', QUEUE: 'memory', MODE: 'queue' },
  { STORE: 'memory', QUEUE: 'memory', MODE: 'queue', ORDERING: '1' },
  { STORE: 'memory', QUEUE: 'memory', MODE: 'queue', HANG: '1' },
  { STORE: 'memory', QUEUE: 'memory', MODE: 'inline', HANG: '1' },
  { STORE: 'redis', QUEUE: 'memory', MODE: 'queue', ORDERING: '1' },
  { STORE: 'redis', QUEUE: 'bullmq', MODE: 'queue' },
  { STORE: 'redis', QUEUE: 'bullmq', MODE: 'queue', ORDERING: '1', HANG: '1' },
  { STORE: 'redis', QUEUE: 'bullmq', MODE: 'inline', ORDERING: '1' },
  { STORE: 'redis', QUEUE: 'bullmq', MODE: 'inline', HANG: '1' },
  { STORE: 'postgres', QUEUE: 'memory', MODE: 'inline', ORDERING: '1' },
  { STORE: 'postgres', QUEUE: 'bullmq-postgres', MODE: 'queue' },
];

/** Runs the child with `setup`; resolves with its exit code and output, or 'still running' past `boundMs`. */
const run = (setup: Setup, boundMs: number): Promise<{ code: number | 'still running'; output: string }> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], {
      env: {
        ...process.env,
        ...setup,
        NAME: setup.STORE === 'postgres' ? uniqueTable('exit') : uniqueName('exit'),
        REDIS_URL: redisUrl,
        PG_URL: postgresUrl,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    // A wide bound: the process should end at once after close(); only a leak keeps it past this.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve({ code: 'still running', output });
    }, boundMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, output });
    });
  });

describe.skipIf(!redisUrl || !postgresUrl)('a process that closes its receiver and returns', () => {
  it.each(SETUPS)('%j: exits by itself', { timeout: 120_000 }, async (setup) => {
    const { code, output } = await run(setup, 60_000);
    expect({ code, output }).toEqual({ code: 0, output: 'closed\n' });
  });
});
