// Faults around the handlers, through `handle`: slow or throwing onError hooks, results that throw when read,
// registrations that fail half-way, and envelope dates that are not RFC 3339 date-times.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ConfigurationError,
  createMemoryQueue,
  createReceiver,
  InvalidPayloadError,
  type MemoryQueueOptions,
  parseEvent,
  type ReceiverOptions,
  silentLogger,
} from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { instantOf } from '../../src/instant.js';
import { markOf } from '../../src/ordering-mark.js';
import { createRegistry } from '../../src/registry.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_dispatch_faults';
const encoder = new TextEncoder();

async function delivery(occurredAt?: string) {
  const signed = await createSignedDelivery({ secret, type: 'leave.approved', occurredAt } as never);
  return { method: 'POST', headers: signed.headers, body: encoder.encode(signed.body) };
}

const make = (options: Partial<ReceiverOptions> = {}, queue: MemoryQueueOptions = {}) =>
  createReceiver({
    secret,
    logger: silentLogger,
    queue: createMemoryQueue({ backoff: () => 1, attempts: 2, ...queue }),
    ...options,
  });

/** Polls `check` until it holds, or fails after `ms`: a wide bound on a hang, never a timing assertion. */
async function until(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

// The first error of a letter: one handler's failure, or the first of several.
const firstError = (error: unknown): unknown => (error instanceof AggregateError ? error.errors[0] : error);

const never = (): Promise<void> => new Promise(() => {});

describe('onError hooks run beside the attempt, never inside it', () => {
  it('a hook slower than the time limit leaves the handler failure, not a HandlerTimeoutError, in the letter', async () => {
    const receiver = make({}, { handlerTimeoutMs: 40 });
    // A hook reporting to an error tracker that does not answer.
    receiver.onError(never);
    receiver.on('leave.approved', () => {
      throw new TypeError('bad field');
    });
    await receiver.handle(await delivery());
    await until(async () => (await receiver.deadLetters()).items.length === 1);
    const [letter] = (await receiver.deadLetters()).items;
    expect(firstError(letter!.error)).toBeInstanceOf(TypeError);
    expect(letter!.attempts).toBe(2);
    await receiver.close({ timeoutMs: 100 });
  });

  it('the same with several handlers: the failing one is reported, the letter keeps its own error', async () => {
    const receiver = make({}, { handlerTimeoutMs: 40 });
    const reported: unknown[] = [];
    receiver.onError((error) => {
      reported.push(error);
      return never();
    });
    let succeeded = 0;
    receiver.on('leave.approved', () => {
      succeeded++;
    });
    receiver.on('leave.*', () => {
      throw new RangeError('out of range');
    });
    await receiver.handle(await delivery());
    await until(async () => (await receiver.deadLetters()).items.length === 1);
    const [letter] = (await receiver.deadLetters()).items;
    expect(firstError(letter!.error)).toBeInstanceOf(RangeError);
    expect(reported.map((error) => (error as Error).constructor.name)).toEqual(['RangeError', 'RangeError']);
    // The handler that succeeded is kept: it is not run again on the retry.
    expect(succeeded).toBe(1);
    await receiver.close({ timeoutMs: 100 });
  });

  it('inline: a hook that never settles does not hold the answer, which is 500 handler_failed', async () => {
    const receiver = make({ mode: 'inline', ackDeadlineMs: 5000 });
    receiver.onError(never);
    receiver.on('leave.approved', () => {
      throw new TypeError('bad field');
    });
    const answer = await receiver.handle(await delivery());
    expect(answer.status).toBe(500);
    expect(answer.body).toBe('{"error":"handler_failed"}');
    await receiver.close({ timeoutMs: 100 });
  });

  it('a hook that throws or rejects is logged at error level and changes nothing of the attempt', async () => {
    const logger = recordingLogger();
    const receiver = make({ logger }, { attempts: 1 });
    const reported: unknown[] = [];
    receiver.onError(() => {
      throw new Error('tracker down');
    });
    receiver.onError(() => Promise.reject(new Error('tracker refused')));
    receiver.onError((error) => void reported.push(error));
    receiver.on('leave.approved', () => {
      throw new TypeError('bad field');
    });
    await receiver.handle(await delivery());
    await until(async () => (await receiver.deadLetters()).items.length === 1);
    const [letter] = (await receiver.deadLetters()).items;
    expect(firstError(letter!.error)).toBeInstanceOf(TypeError);
    // Every hook heard of the failure, the ones before it that threw notwithstanding.
    expect(reported).toHaveLength(1);
    const hookLines = () =>
      logger.lines.filter((line) => line.msg === 'workforce-webhooks: an onError handler threw');
    await until(() => hookLines().length === 2);
    expect(hookLines().map((line) => [line.level, (line.obj.err as Error).message].join(' '))).toEqual([
      'error tracker down',
      'error tracker refused',
    ]);
    await receiver.close();
  });
});

describe('a handler result whose then getter throws', () => {
  const brokenThenable = () =>
    ({
      // biome-ignore lint/suspicious/noThenProperty: a `then` that throws when read is the point of these tests.
      get then(): never {
        throw new Error('broken thenable');
      },
    }) as never;

  it('is reported to onError like any failure, and its error is the letter', async () => {
    const receiver = make();
    const reported: unknown[] = [];
    receiver.onError((error) => void reported.push(error));
    receiver.on('leave.approved', brokenThenable);
    await receiver.handle(await delivery());
    await until(async () => (await receiver.deadLetters()).items.length === 1);
    expect(reported.map((error) => (error as Error).message)).toEqual(['broken thenable', 'broken thenable']);
    const [letter] = (await receiver.deadLetters()).items;
    expect((firstError(letter!.error) as Error).message).toBe('broken thenable');
    await receiver.close();
  });

  it('inline: is answered 500 handler_failed and reported', async () => {
    const receiver = make({ mode: 'inline' });
    const reported: unknown[] = [];
    receiver.onError((error) => void reported.push(error));
    receiver.on('leave.approved', brokenThenable);
    const answer = await receiver.handle(await delivery());
    expect(answer.body).toBe('{"error":"handler_failed"}');
    expect(reported).toHaveLength(1);
    await receiver.close();
  });
});

describe('on() with an invalid pattern among valid ones', () => {
  it('registers nothing: a delivery of the valid type is ignored', async () => {
    const receiver = make({ mode: 'inline' });
    let runs = 0;
    expect(() =>
      receiver.on(['leave.approved', 'not a pattern!'] as never, () => {
        runs++;
      }),
    ).toThrow(ConfigurationError);
    const answer = await receiver.handle(await delivery());
    expect(answer.body).toBe('{"received":true,"ignored":true}');
    expect(runs).toBe(0);
    await receiver.close();
  });

  it('leaves the registry as it was, matches already cached included', () => {
    const registry = createRegistry();
    const first = () => {};
    registry.add('leave.approved', first);
    expect(registry.match('leave.approved').map((entry) => entry.handler)).toEqual([first]);
    expect(() => registry.add(['leave.*', 'leave.'], () => {})).toThrow(ConfigurationError);
    expect(registry.match('leave.approved').map((entry) => entry.handler)).toEqual([first]);
    expect(registry.match('leave.cancelled')).toEqual([]);
    // The next registration is the second one.
    registry.add('leave.*', () => {});
    expect(registry.match('leave.cancelled')[0]!.index).toBe(1);
  });
});

describe('occurredAt must be an RFC 3339 date-time', () => {
  const valid = {
    id: '3f1c2d4e-5a6b-4c7d-8e9f-0a1b2c3d4e5f',
    type: 'leave.approved',
    apiVersion: '2026-10-15',
    occurredAt: '2026-11-21T10:15:30.123Z',
    organizationId: '00000000-0000-4000-8000-000000000001',
    data: {},
  };
  const accepts = (occurredAt: string): boolean => {
    try {
      parseEvent(encoder.encode(JSON.stringify({ ...valid, occurredAt })));
      return true;
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidPayloadError);
      return false;
    }
  };

  it('answers 400 invalid_payload to text Date.parse reads but RFC 3339 does not', async () => {
    const receiver = make();
    receiver.on('leave.approved', () => {});
    for (const occurredAt of ['1', '2026', 'Tue Nov 24 2026', '2026-11-24', '2026-11-24T10:00:00']) {
      const answer = await receiver.handle(await delivery(occurredAt));
      expect(answer.status, occurredAt).toBe(400);
      expect(answer.body, occurredAt).toBe('{"error":"invalid_payload"}');
    }
    expect((await receiver.handle(await delivery('2026-11-24T10:00:00.123456Z'))).status).toBe(202);
    await receiver.close();
  });

  it('takes the forms RFC 3339 allows: any fraction, offsets, a lowercase t and z', () => {
    for (const occurredAt of [
      '2026-11-24T10:00:00Z',
      '2026-11-24T10:00:00.1Z',
      '2026-11-24T10:00:00.123456789012+05:30',
      '2026-11-24T10:00:00-00:00',
      '2026-11-24t10:00:00.5z',
      '0000-01-01T00:00:00Z',
      '9999-12-31T23:59:59.999Z',
    ])
      expect(accepts(occurredAt), occurredAt).toBe(true);
  });

  it('refuses other shapes, fields out of range, and days the month does not have', () => {
    for (const occurredAt of [
      '2026-11-24 10:00:00Z',
      '2026-11-24T10:00Z',
      '2026-11-24T10:00:00.Z',
      '2026-11-24T10:00:00+0100',
      '2026-11-24T10:00:00+24:00',
      '2026-11-24T24:00:00Z',
      '2026-11-24T23:59:61Z',
      '2026-13-01T00:00:00Z',
      '2026-02-29T00:00:00Z',
      '1900-02-29T00:00:00Z',
      '2026-02-30T00:00:00Z',
      '2026-04-31T00:00:00Z',
      '+02026-11-24T10:00:00Z',
      '2026-11-24T10:00:00Z\n',
      ' 2026-11-24T10:00:00Z',
      '２０２６-11-24T10:00:00Z',
    ])
      expect(accepts(occurredAt), JSON.stringify(occurredAt)).toBe(false);
    for (const occurredAt of [
      '2028-02-29T00:00:00Z',
      '2000-02-29T00:00:00Z',
      '2026-12-31T00:00:00Z',
      '2016-12-31T23:59:60Z',
      '2017-01-01T05:29:60.5+05:30',
    ])
      expect(accepts(occurredAt), occurredAt).toBe(true);
  });

  it('takes exactly the RFC 3339 date-times of real calendar days, each one an instant ordering can place', () => {
    // RFC 3339 section 5.6, a leap second (section 5.7) read as the last nanosecond before it, whatever its
    // fraction; the calendar from Date.UTC, a source independent of the check.
    const GRAMMAR = /^(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(\.\d+)?([Zz]|[+-](\d\d):(\d\d))$/;
    // The instant the text names, in milliseconds; undefined when it is no RFC 3339 date-time of a real day.
    const oracle = (text: string): number | undefined => {
      const m = GRAMMAR.exec(text);
      if (m === null) return undefined;
      const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as number[];
      const date = new Date(Date.UTC(2000, month! - 1, day!));
      date.setUTCFullYear(year!);
      const realDay =
        month! >= 1 && month! <= 12 && date.getUTCDate() === day && date.getUTCMonth() === month! - 1;
      const offset =
        m[9] === undefined ? 0 : (Number(m[9]) * 60 + Number(m[10])) * (m[8]![0] === '-' ? -1 : 1);
      const offsetOk = m[9] === undefined || (Number(m[9]) <= 23 && Number(m[10]) <= 59);
      if (!(realDay && hour! <= 23 && minute! <= 59 && second! <= 60 && offsetOk)) return undefined;
      const leap = second === 60;
      const millis = leap ? 999 : Number((m[7] ?? '.').slice(1, 4).padEnd(3, '0'));
      return date.getTime() + ((hour! * 60 + minute! - offset) * 60 + (leap ? 59 : second!)) * 1000 + millis;
    };
    const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));
    const dateTime = fc
      .tuple(
        fc.integer({ min: 0, max: 9999 }).map((n) => String(n).padStart(4, '0')),
        two(13),
        two(32),
        fc.constantFrom('T', 't', ' '),
        two(24),
        two(60),
        two(60),
        fc.option(fc.stringMatching(/^\.\d{0,12}$/), { nil: '' }),
        fc.constantFrom('Z', 'z', '', '+00:00', '-05:30', '+23:59', '+24:00', '+14:60', '+0100'),
      )
      .map(([y, mo, d, t, h, mi, s, frac, zone]) => `${y}-${mo}-${d}${t}${h}:${mi}:${s}${frac}${zone}`);
    fc.assert(
      fc.property(fc.oneof(dateTime, fc.string({ maxLength: 30 })), (occurredAt) => {
        const instant = oracle(occurredAt);
        expect(accepts(occurredAt)).toBe(instant !== undefined);
        if (instant === undefined) return;
        // What ordering and telemetry read of it (Date.parse) is the instant it names, placed in order from 1970 on
        // (before 1970, a time value rounds a fraction of a millisecond toward zero: one millisecond later). To the
        // nanosecond that ordering compares: V8 misreads fractions of ten digits or more that start with a zero.
        if (/\.\d{10}/.test(occurredAt)) return;
        const read = instantOf(occurredAt);
        if (instant >= 0) {
          expect(read).toBe(instant);
          expect(markOf({ id: 'x', occurredAt })).toBeDefined();
        } else expect(read - instant).toBeLessThanOrEqual(1);
      }),
      { numRuns: 10_000 },
    );
  });
});
