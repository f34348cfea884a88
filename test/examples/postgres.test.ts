// Smoke test of examples/postgres: started as a real process on its own database, sent signed deliveries.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { sync } from '../../scripts/snippets.js';
import { LEAVE_APPROVED } from '../contract/adapter-dedupe.js';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';

const secret = 'whsec_postgres_example_test';
const script = fileURLToPath(new URL('../../examples/postgres/server.ts', import.meta.url));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

async function startExample(databaseUrl: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: '0', WORKFORCE_WEBHOOK_SECRET: secret },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const port = await new Promise<number>((resolve, reject) => {
    let buffered = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const line = buffered.split('\n').find((each) => each.startsWith('{"listening"'));
      if (line) resolve((JSON.parse(line) as { listening: number }).listening);
    });
    void exited.then((code) => reject(new Error(`examples/postgres exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}/webhooks/workforce`, exited, child };
}

describe('README "Running on Postgres"', () => {
  it('shows the example exactly as examples/postgres has it', () => {
    const doc = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(doc).toContain('<!-- snippet: examples/postgres/server.ts#postgres -->');
    expect(sync(doc).stale).toEqual([]);
  });
});

describe.skipIf(!postgresUrl)('examples/postgres', () => {
  it('writes one app row per event through its transaction, answers a redelivery as a duplicate, refuses a forgery', {
    timeout: 60_000,
  }, async () => {
    // A database of its own: the example uses the default table names.
    const admin = connectPostgres();
    const database = uniqueTable('example');
    await admin.query(`CREATE DATABASE ${database}`);
    const databaseUrl = new URL(postgresUrl);
    databaseUrl.pathname = `/${database}`;
    const example = await startExample(databaseUrl.href);

    const delivery = await createSignedDelivery({ secret, type: 'leave.approved', data: LEAVE_APPROVED });
    const send = async (headers: Record<string, string>) =>
      (await fetch(example.url, { method: 'POST', headers, body: delivery.body })).status;
    expect(await send(delivery.headers)).toBe(202);
    const db = connectPostgres(databaseUrl.href);
    const rows = async () =>
      (await db.query('SELECT event_id, employee_id, start_date FROM leave_blocks')).rows;
    await expect.poll(rows, { timeout: 20_000 }).toEqual([
      {
        event_id: delivery.event.id,
        employee_id: LEAVE_APPROVED.employeeId,
        start_date: LEAVE_APPROVED.startDate,
      },
    ]);
    expect(await send(delivery.headers)).toBe(200);
    expect(await send({ ...delivery.headers, 'svc-signature': 't=1,v1=00' })).toBe(400);
    const { rows: marks } = await db.query(
      'SELECT token IS NULL AS done, committed FROM workforce_webhook_events WHERE id = $1',
      [delivery.event.id],
    );
    expect(marks).toEqual([{ done: true, committed: true }]);
    expect(await rows()).toHaveLength(1);

    // Ctrl-C, as in development: the same drain as SIGTERM, the pool ended, exit 0.
    example.child.kill('SIGINT');
    expect(await example.exited).toBe(0);
  });
});
