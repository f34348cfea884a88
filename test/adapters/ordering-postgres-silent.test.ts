// Ordering on the Postgres store when PostgreSQL is alive but silent (SIGSTOP): every ordering step fails within the
// store's deadline, and an event whose handlers succeeded just before the server went silent counts as processed,
// its watermark written once the server answers again.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryQueue, createReceiver, type DeadLetter } from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createSignedDelivery, sampleEventData } from 'workforce-webhooks/testing';
import { markOf } from '../../src/ordering-mark.js';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { hasPostgres, type PostgresServer, startPostgresServer } from '../setup/postgres-server.js';
import { recordingLogger } from '../support/logger.js';
import { until } from '../support/ordering-scenario.js';

const secret = 'whsec_ordering_postgres_silent';
const encoder = new TextEncoder();

// What `promise` did within `ms` (a wide bound on a hang): its error's code, 'answered', or 'no answer'.
const within = <T>(promise: Promise<T>, ms: number): Promise<string> =>
  Promise.race([
    promise.then(
      () => 'answered',
      (error: unknown) => `rejected: ${(error as { code?: string })?.code ?? error}`,
    ),
    sleep(ms).then(() => 'no answer'),
  ]);

describe.skipIf(!postgresUrl || !hasPostgres())('ordering on a Postgres that stops answering', () => {
  // A server of this file's own: pausing the run's would stall every other file.
  let postgres: PostgresServer;
  beforeAll(async () => {
    postgres = await startPostgresServer();
  }, 60_000);
  afterEach(() => postgres.resume());
  afterAll(async () => {
    await sleep(500); // calls a failed test left waiting finish before the server goes
    await postgres?.dispose();
  });

  const store = async (label: string) => {
    const made = createPostgresStore({
      pool: connectPostgres(postgres.url),
      table: uniqueTable(label),
      timeoutMs: 500,
      cleanupIntervalMs: 0,
    });
    await made.migrate();
    return made;
  };

  it('fails each ordering step in time on a silent server, and serves them again once it answers', {
    timeout: 90_000,
  }, async () => {
    const made = await store('silent_steps');
    const ordering = made.ordering!;
    const key = crypto.randomUUID();
    expect((await ordering.enter(key, 'a', 30_000, 'r')).status).toBe('entered');
    await postgres.pause();
    const steps = await Promise.all([
      within(Promise.resolve(ordering.enter(`${key}-other`, 'b', 30_000, 'r')), 15_000),
      within(ordering.hold(key, 'a', 60_000, 'r'), 15_000),
      within(Promise.resolve(ordering.leave(key, 'a', 'mark', 60_000, 'r')), 15_000),
      within(Promise.resolve(ordering.renew(key, 'a', 'r', 30_000)), 15_000),
      within(ordering.watermark(key), 15_000),
    ]);
    await postgres.resume();
    expect(steps).toEqual(Array(5).fill('rejected: store_unavailable'));
    // The pool gave the stalled connections up: the next steps land (the stalled ones may have run meanwhile).
    const next = crypto.randomUUID();
    expect((await ordering.enter(next, 'c', 30_000, 'r')).status).toBe('entered');
    expect(await ordering.renew(next, 'c', 'r', 30_000)).toBe(true);
    expect(await ordering.leave(next, 'c', 'mark', 60_000, 'r')).toBe(true);
    expect(await ordering.watermark(next)).toBe('mark');
  });

  it('counts an event whose handlers succeeded as processed when the server goes silent before its watermark write', {
    timeout: 90_000,
  }, async () => {
    const made = await store('silent_leave');
    const logger = recordingLogger();
    const letters: DeadLetter[] = [];
    const receiver = createReceiver({
      secret,
      store: made,
      logger,
      queue: createMemoryQueue({ attempts: 1, handlerTimeoutMs: 6000 }),
      ordering: {},
      onDeadLetter: (letter) => void letters.push(letter),
    });
    const leaveRequestId = crypto.randomUUID();
    const data = { ...sampleEventData('leave.approved'), leaveRequestId };
    const signed = (occurredAt: string) =>
      createSignedDelivery({ secret, type: 'leave.approved', data, occurredAt });
    const newer = await signed('2026-11-20T10:00:00.000Z');
    const older = await signed('2026-11-20T09:00:00.000Z');
    const ran: string[] = [];
    let paused: Promise<void> | undefined;
    receiver.on('leave.approved', (event) => {
      ran.push(event.id);
      if (event.id === newer.event.id) paused = postgres.pause();
    });
    const post = (delivery: typeof newer) =>
      receiver.handle({ method: 'POST', headers: delivery.headers, body: encoder.encode(delivery.body) });
    expect((await post(newer)).status).toBe(202);
    await until(() => paused !== undefined, 'the handler');
    await paused;
    // Silent for twice the attempt's time limit.
    await sleep(12_000);
    await postgres.resume();
    let watermark: string | undefined;
    for (const end = Date.now() + 20_000; watermark === undefined && Date.now() < end; ) {
      watermark = await made.ordering!.watermark(leaveRequestId).catch(() => undefined);
      if (watermark === undefined) await sleep(50);
    }
    expect(watermark).toBe(markOf(newer.event));
    const answer = await post(older);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ received: true, stale: true });
    await receiver.close({ timeoutMs: 5000 });
    expect(ran).toEqual([newer.event.id]);
    expect(letters).toEqual([]);
  });
});
