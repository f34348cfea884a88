// The queue contract on the BullMQ queue with BullMQ's Postgres backend: a real PostgreSQL, no Redis.
import { createPostgresBackend } from 'bullmq';
import { describe } from 'vitest';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { postgresUrl } from '../setup/postgres-helpers.js';
import { runQueueContract } from './queue-suite.js';

describe.skipIf(!postgresUrl)('with PostgreSQL (BullMQ Postgres backend)', () => {
  let run = 0;
  runQueueContract('bullmq on postgres', (options) =>
    createBullmqQueue({
      backend: createPostgresBackend,
      // BullMQ owns this pool; it creates its schema on first use.
      connection: { connectionString: postgresUrl, migrate: true, max: 4 },
      name: `contract-${process.pid}-${run++}-${crypto.randomUUID().slice(0, 8)}`,
      lockDurationMs: 5000,
      stalledIntervalMs: 5000,
      ...options,
    }),
  );
});
