// occurredAt values RFC 3339 allows (offsets, a lowercase t and z, fractions past the millisecond and the nanosecond,
// a leap second, years before 1970 and past 2038) compared alike by the memory, Redis and Postgres stores (spec rule
// 4), and a record's events with such dates kept in order by the receiver.
import { describe, expect, it } from 'vitest';
import {
  createMemoryStore,
  createReceiver,
  type DedupeStore,
  type OrderingStore,
  type Receiver,
} from 'workforce-webhooks';
import { createPostgresStore } from 'workforce-webhooks/postgres';
import { createRedisStore } from 'workforce-webhooks/redis';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { parseEvent } from '../../src/envelope.js';
import { markOf } from '../../src/ordering-mark.js';
import { connectPostgres, postgresUrl, uniqueTable } from '../setup/postgres-helpers.js';
import { connectRedis, redisUrl, uniqueName } from '../setup/redis-helpers.js';
import { until } from '../support/ordering-scenario.js';

const DAY = 24 * 60 * 60 * 1000;
const encoder = new TextEncoder();

const GRAMMAR = /^(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d+))?(?:[Zz]|([+-])(\d\d):(\d\d))$/;

// The instant the text names, in nanoseconds since 1970, read apart from the package: the calendar from Date.UTC,
// the rest by hand. A leap second (`:60`) is the last nanosecond of the second before it, whatever its fraction;
// digits past the nanosecond say nothing.
const nanosecondsOf = (text: string): bigint => {
  const m = GRAMMAR.exec(text);
  if (m === null) throw new Error(`not an RFC 3339 date-time: ${text}`);
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as number[];
  const date = new Date(Date.UTC(2000, month! - 1, day!));
  date.setUTCFullYear(year!);
  const offset = m[9] === undefined ? 0 : (Number(m[9]) * 60 + Number(m[10])) * (m[8] === '-' ? -1 : 1);
  const leap = second === 60;
  const seconds = (hour! * 60 + minute! - offset) * 60 + (leap ? 59 : second!);
  const fraction = leap ? 999_999_999n : BigInt((m[7] ?? '').slice(0, 9).padEnd(9, '0'));
  return BigInt(date.getTime()) * 1_000_000n + BigInt(seconds) * 1_000_000_000n + fraction;
};

// Each with its own event id; several name one instant (ties, broken by the id).
const dates = [
  '2026-11-24T10:00:00.0001Z',
  '2026-11-24T10:00:00.0002Z',
  '2026-11-24T10:00:00.0001000001Z',
  '2026-11-24t10:00:00.00015z',
  '2026-11-25T00:00:00.0001+14:00',
  '2026-11-23T22:00:00.0002-12:00',
  '2026-11-24T10:00:00.000999999Z',
  '2026-11-24T10:00:00.001Z',
  '1970-01-01T00:00:00Z',
  '1969-12-31T23:59:59.999999999Z',
  '1969-12-31T23:59:59.9995Z',
  '1969-12-31T23:59:59.999Z',
  '0001-01-01T00:00:00Z',
  '0000-01-01T00:00:00.000000001Z',
  '2038-01-19T03:14:08Z',
  '2106-02-07T06:28:16.5Z',
  '9999-12-31T23:59:59.999999999Z',
  '2016-12-31T23:59:59.5Z',
  '2016-12-31T23:59:60.5Z',
  '2017-01-01T05:29:60+05:30',
  '2017-01-01T00:00:00Z',
].map((occurredAt) => ({ id: crypto.randomUUID(), occurredAt }));

type Dated = (typeof dates)[number];
// Newer: the later instant, then the larger event id.
const newer = (a: Dated, b: Dated): Dated => {
  const [x, y] = [nanosecondsOf(a.occurredAt), nanosecondsOf(b.occurredAt)];
  if (x !== y) return x > y ? a : b;
  return a.id > b.id ? a : b;
};

const stores: readonly (readonly [string, boolean, () => Promise<DedupeStore>])[] = [
  ['memory', true, async () => createMemoryStore()],
  [
    'redis',
    Boolean(redisUrl),
    async () => createRedisStore({ client: connectRedis(), prefix: `${uniqueName('values-dates')}:` }),
  ],
  [
    'postgres',
    Boolean(postgresUrl),
    async () => {
      const store = createPostgresStore({
        pool: connectPostgres(),
        table: uniqueTable('values_dates'),
        cleanupIntervalMs: 0,
      });
      await store.migrate();
      return store;
    },
  ],
];

const orderingOf = (store: DedupeStore): OrderingStore => {
  if (store.ordering === undefined) throw new Error('the store has no ordering');
  return store.ordering;
};

describe('occurredAt values of RFC 3339', () => {
  it('are each an event envelope the receiver takes', () => {
    for (const { id, occurredAt } of dates) {
      const body = JSON.stringify({
        id,
        type: 'leave.approved',
        apiVersion: '2026-10-15',
        occurredAt,
        organizationId: crypto.randomUUID(),
        data: {},
      });
      expect(parseEvent(encoder.encode(body)).occurredAt, occurredAt).toBe(occurredAt);
    }
  });

  for (const [name, available, create] of stores) {
    it.skipIf(!available)(
      `are compared as instants to the nanosecond, ties by event id, on the ${name} store, whatever the order of arrival`,
      async () => {
        const keys = orderingOf(await create());
        const prefix = crypto.randomUUID();
        let pair = 0;
        for (const a of dates)
          for (const b of dates) {
            if (a === b) continue;
            const key = `${prefix}:${pair++}`;
            await keys.leave(key, 'a', markOf(a), DAY);
            await keys.leave(key, 'b', markOf(b), DAY);
            const expected = newer(a, b);
            expect(await keys.watermark(key), `${a.occurredAt} then ${b.occurredAt}`).toBe(markOf(expected));
          }
      },
      300_000,
    );
  }
});

describe('a record whose events have such dates', () => {
  const deliver = async (receiver: Receiver, occurredAt: string, key: string) => {
    const signed = await createSignedDelivery({
      secret: 'whsec_values_dates',
      type: 'leave.approved',
      occurredAt,
      data: { leaveRequestId: key } as never,
    });
    const answer = await receiver.handle({
      method: 'POST',
      headers: signed.headers,
      body: encoder.encode(signed.body),
    });
    await answer.background;
    return { status: answer.status, body: JSON.parse(answer.body) as unknown };
  };

  it('skips its older event once a newer one was handled, across a leap second and before 1970', async () => {
    const receiver = createReceiver({ secret: 'whsec_values_dates', ordering: {} });
    const ran: string[] = [];
    receiver.on('leave.approved', (event) => void ran.push(event.occurredAt));
    for (const [newest, older] of [
      ['2016-12-31T23:59:60.5Z', '2016-12-31T23:59:59.9Z'],
      ['2017-01-01T00:00:00Z', '2016-12-31T23:59:60.5Z'],
      ['1970-01-01T00:00:00Z', '1969-12-31T23:59:59.5Z'],
      ['1969-12-31T23:59:59Z', '0001-01-01T00:00:00Z'],
    ] as const) {
      const key = crypto.randomUUID();
      const before = ran.length;
      expect((await deliver(receiver, newest, key)).status).toBe(202);
      await until(() => ran.length === before + 1, newest);
      expect(await deliver(receiver, older, key)).toEqual({
        status: 200,
        body: { received: true, stale: true },
      });
    }
    expect(ran).toEqual([
      '2016-12-31T23:59:60.5Z',
      '2017-01-01T00:00:00Z',
      '1970-01-01T00:00:00Z',
      '1969-12-31T23:59:59Z',
    ]);
    await receiver.close();
  });
});
