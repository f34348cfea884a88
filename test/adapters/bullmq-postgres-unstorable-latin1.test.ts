// BullMQ's Postgres backend in a database whose encoding is not UTF8 (LATIN1): its own statements hold characters
// LATIN1 lacks, so its migration and every event ("Zoë 🙂" or plain) are refused. What to say, with the fix; SQL_ASCII
// (bytes stored as sent) and UTF8 hold every character and are said nothing of.
import { setTimeout as sleep } from 'node:timers/promises';
import { createPostgresBackend } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { createMemoryStore, createReceiver } from 'workforce-webhooks';
import { createBullmqQueue } from 'workforce-webhooks/bullmq';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { encodingProblem } from '../../adapters/bullmq-postgres-text.js';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { uniqueName } from '../setup/redis-helpers.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_bullmq_postgres_latin1';

describe.skipIf(!postgresUrl)('the database of BullMQ’s Postgres backend', () => {
  it('is said with the fix when it is LATIN1, and not when it is UTF8 or SQL_ASCII', {
    timeout: 60_000,
  }, async () => {
    const admin = connectPostgres();
    const urlOf = (name: string): string => {
      const at = new URL(postgresUrl);
      at.pathname = `/${name}`;
      return at.toString();
    };
    const made: string[] = [];
    try {
      for (const encoding of ['LATIN1', 'SQL_ASCII']) {
        const name = uniqueTable(encoding.toLowerCase());
        await admin.query(
          `CREATE DATABASE ${name} ENCODING '${encoding}' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`,
        );
        made.push(name);
      }
      expect(await encodingProblem(connectPostgres(urlOf(made[0]!)))).toMatch(
        /encoding LATIN1, not UTF8.*every event is refused \(503\).*ENCODING 'UTF8' TEMPLATE template0/,
      );
      expect(await encodingProblem(connectPostgres(urlOf(made[1]!)))).toBeUndefined();
      expect(await encodingProblem(connectPostgres())).toBeUndefined();
    } finally {
      for (const name of made) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }
  });
});

describe.skipIf(!postgresUrl)('a receiver whose BullMQ queue is on a LATIN1 database', () => {
  it('answers 503, says why once with the fix, and its worker does not spin: timers still fire', {
    timeout: 60_000,
  }, async () => {
    const admin = connectPostgres();
    const name = uniqueTable('latin1_queue');
    await admin.query(
      `CREATE DATABASE ${name} ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0`,
    );
    const url = new URL(postgresUrl);
    url.pathname = `/${name}`;
    const logger = recordingLogger();
    const receiver = createReceiver({
      secret,
      logger,
      store: createMemoryStore(),
      queue: createBullmqQueue({
        backend: createPostgresBackend,
        connection: { connectionString: url.toString(), migrate: true, max: 4 },
        name: uniqueName('latin1'),
      }),
    });
    receiver.on('leave.approved', () => {});
    try {
      const delivery = await createSignedDelivery({ secret, type: 'leave.approved' });
      const answer = await receiver.handle({
        method: 'POST',
        headers: delivery.headers,
        body: new TextEncoder().encode(delivery.body),
      });
      expect(answer.status).toBe(503);
      // A worker whose every fetch fails in the same turn would starve the event loop: this timer would never fire.
      await sleep(3000);
      const said = logger.lines.filter((line) => /encoding LATIN1, not UTF8/.test(line.msg ?? ''));
      expect(said).toHaveLength(1);
      expect(said[0]!.level).toBe('error');
      // The worker's refused fetches are what that line explains: not one warning each.
      expect(
        logger.lines.filter((line) => line.msg === 'workforce-webhooks: BullMQ error').length,
      ).toBeLessThan(5);
    } finally {
      await receiver.close({ timeoutMs: 2000 });
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }
  });
});
