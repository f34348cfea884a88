// Options that cannot work are refused at createReceiver and close(); a throwing logger or waitUntil costs no delivery.
import { describe, expect, it } from 'vitest';
import {
  ConfigurationError,
  createMemoryQueue,
  createMemoryStore,
  createReceiver,
  type EventQueue,
  type Logger,
  type ReceiverOptions,
} from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { MAX_TIMER_MS } from '../../src/timer-limit.js';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_options_faults';
const encoder = new TextEncoder();
const URL_ = 'https://hooks.example.com/webhooks/workforce';

async function delivery(type = 'leave.approved') {
  const signed = await createSignedDelivery({ secret, type });
  return { method: 'POST', headers: signed.headers, body: encoder.encode(signed.body) };
}

const fastQueue = (options: Parameters<typeof createMemoryQueue>[0] = {}): EventQueue =>
  createMemoryQueue({ backoff: () => 1, attempts: 3, ...options });
const make = (options: Partial<ReceiverOptions> = {}) =>
  createReceiver({ secret, queue: fastQueue(), logger: false, ...options });
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it is true, or fails after `ms` (a wide bound on a hang, never a timing assertion). */
async function until(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(5);
  }
}

// The ConfigurationError `create` throws, or undefined.
function refusal(create: () => unknown): ConfigurationError | undefined {
  try {
    create();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return error as ConfigurationError;
  }
  return undefined;
}

describe('createReceiver options of the wrong type', () => {
  const memory = createMemoryStore();
  // Each with a store, a queue and a logger given, so that no default of the package checks it first.
  const wrong: [string, string, unknown][] = [
    ['now', 'a string', 'Date.now'],
    ['store', '{}', {}],
    ['store', 'a store without renew', { ...memory, renew: undefined }],
    ['queue', '{}', {}],
    ['logger', 'a string', 'pino'],
    ['logger', 'null', null],
    ['logger', 'true', true],
    ['logger', 'an object without debug', { info: () => {}, warn: () => {}, error: () => {} }],
    ['onDeadLetter', 'a string', 'notify'],
    ['onStale', 'a number', 5],
    ['telemetry', 'a number', 5],
    ['api', 'a number', 5],
    ['ordering', 'a number', 5],
    ['ordering', 'null', null],
    ['toleranceSeconds', 'a string', '300'],
    ['handlerTimeoutMs', 'NaN', Number.NaN],
  ];
  for (const [name, label, value] of wrong) {
    it(`refuses ${name} of ${label} with a ConfigurationError naming it`, () => {
      const error = refusal(() =>
        createReceiver({
          secret,
          store: createMemoryStore(),
          queue: fastQueue(),
          logger: false,
          [name]: value,
        } as never),
      );
      expect(error?.message).toContain(name);
    });
  }

  it('says what a store and a queue must have', () => {
    expect(refusal(() => make({ store: {} as never }))?.message).toMatch(
      /claim, complete, release and renew/,
    );
    expect(refusal(() => make({ queue: {} as never }))?.message).toMatch(
      /start, enqueue, deadLetters, replay, discard and close/,
    );
  });

  it('takes a store whose methods are on its prototype, console as a logger, and ordering: {}', () => {
    const memory = createMemoryStore();
    class ClassStore {
      claim(id: string, leaseMs: number) {
        return memory.claim(id, leaseMs);
      }
      renew(id: string, token: string, leaseMs: number) {
        return memory.renew(id, token, leaseMs);
      }
      complete(id: string, token: string, ttlMs: number) {
        return memory.complete(id, token, ttlMs);
      }
      release(id: string, token: string) {
        return memory.release(id, token);
      }
    }
    expect(() => make({ store: new ClassStore() })).not.toThrow();
    expect(() => make({ logger: console })).not.toThrow();
    expect(() => make({ ordering: {} })).not.toThrow();
  });
});

describe('timer options past 2^31 - 1 ms', () => {
  const timers = [
    'ackDeadlineMs',
    'handlerTimeoutMs',
    'bodyTimeoutMs',
    'leaseMs',
    'storeTimeoutMs',
    'queueTimeoutMs',
  ] as const;
  for (const name of timers) {
    it(`refuses ${name} of 2^31 ms at creation, naming the range and the value given`, () => {
      const error = refusal(() => make({ mode: 'inline', [name]: 2 ** 31 }));
      expect(error?.message).toContain(name);
      expect(error?.message).toContain(String(MAX_TIMER_MS));
      expect(error?.message).toContain(String(2 ** 31));
    });
  }

  it('takes every timer option at 2^31 - 1 ms', () => {
    const options = Object.fromEntries(timers.map((name) => [name, MAX_TIMER_MS]));
    expect(() => make({ mode: 'inline', ...options })).not.toThrow();
  });

  it('an inline run under a handlerTimeoutMs of 2^31 - 1 ms is not aborted', async () => {
    const receiver = make({ mode: 'inline', handlerTimeoutMs: MAX_TIMER_MS });
    receiver.on('leave.approved', async () => {
      await sleep(30);
    });
    expect((await receiver.handle(await delivery())).status).toBe(200);
    await receiver.close();
  });
});

describe('close({ timeoutMs })', () => {
  it('Infinity waits for a running queued event instead of dead-lettering it at once', async () => {
    const receiver = make();
    let processed = 0;
    receiver.on('leave.approved', async () => {
      await sleep(50);
      processed++;
    });
    expect((await receiver.handle(await delivery())).status).toBe(202);
    await sleep(5);
    await receiver.close({ timeoutMs: Number.POSITIVE_INFINITY });
    expect(processed).toBe(1);
    expect((await receiver.deadLetters()).items).toHaveLength(0);
  });

  it('Infinity lets an inline run end and answer 200 instead of cutting it short', async () => {
    const receiver = make({ mode: 'inline' });
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    receiver.on('leave.approved', async () => {
      started();
      await sleep(50);
    });
    const answer = receiver.handle(await delivery());
    await running;
    await receiver.close({ timeoutMs: Number.POSITIVE_INFINITY });
    expect((await answer).status).toBe(200);
  });

  it('0 and 2^31 - 1 are taken', async () => {
    await expect(make().close({ timeoutMs: 0 })).resolves.toBeUndefined();
    await expect(make({ mode: 'inline' }).close({ timeoutMs: MAX_TIMER_MS })).resolves.toBeUndefined();
  });

  for (const [label, timeoutMs] of [
    ['NaN', Number.NaN],
    ['-1', -1],
    ['2^31', 2 ** 31],
    ["'1000'", '1000'],
  ] as const) {
    it(`${label} is refused with a ConfigurationError and the receiver stays open`, async () => {
      const receiver = make();
      let processed = 0;
      receiver.on('leave.approved', async () => {
        await sleep(50);
        processed++;
      });
      expect((await receiver.handle(await delivery())).status).toBe(202);
      await sleep(5);
      await expect(receiver.close({ timeoutMs: timeoutMs as number })).rejects.toThrow(ConfigurationError);
      // Still open: deliveries are taken, and the running event is neither cut nor dead-lettered.
      expect((await receiver.handle(await delivery())).status).toBe(202);
      await receiver.close();
      expect(processed).toBe(2);
      expect((await receiver.deadLetters()).items).toHaveLength(0);
    });
  }
});

describe('a logger that throws', () => {
  const boom = (): never => {
    throw new Error('log transport down');
  };
  const throwing: Logger = { debug: boom, info: boom, warn: boom, error: boom };

  it('makes no unhandled rejection when an event is dead-lettered', async () => {
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown): void => void rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const receiver = createReceiver({ secret, logger: throwing, queue: fastQueue({ attempts: 1 }) });
      receiver.on('leave.approved', () => {
        throw new Error('handler failed');
      });
      expect((await receiver.handle(await delivery())).status).toBe(202);
      await until(async () => (await receiver.deadLetters()).items.length === 1);
      await sleep(20);
      await receiver.close();
    } finally {
      process.off('unhandledRejection', onRejection);
    }
    expect(rejections).toEqual([]);
  });

  it('still answers a forged delivery 400 and a signed one 202', async () => {
    const receiver = createReceiver({ secret, logger: throwing, queue: fastQueue() });
    receiver.on('leave.approved', () => {});
    const input = await delivery();
    const forged = { ...input, headers: { ...input.headers, 'svc-signature': 't=1,v1=00' } };
    expect((await receiver.handle(forged)).status).toBe(400);
    expect((await receiver.handle(input)).status).toBe(202);
    await receiver.close();
  });

  it("calls the logger's methods on the logger, so a class-based logger keeps its `this`", async () => {
    class Collecting implements Logger {
      readonly #lines: string[] = [];
      get lines(): readonly string[] {
        return this.#lines;
      }
      debug(_obj: object, msg?: string): void {
        this.#lines.push(`debug ${msg}`);
      }
      info(_obj: object, msg?: string): void {
        this.#lines.push(`info ${msg}`);
      }
      warn(_obj: object, msg?: string): void {
        this.#lines.push(`warn ${msg}`);
      }
      error(_obj: object, msg?: string): void {
        this.#lines.push(`error ${msg}`);
      }
    }
    const logger = new Collecting();
    const receiver = createReceiver({ secret, logger, queue: fastQueue() });
    const input = await delivery();
    await receiver.handle({ ...input, headers: { ...input.headers, 'svc-signature': 't=1,v1=00' } });
    expect(logger.lines).toContain('info workforce-webhooks: delivery refused');
    await receiver.close();
  });
});

describe('receiver.fetch with a waitUntil that throws', () => {
  it('still answers the delivery it already queued 202, and logs the fix once', async () => {
    const logger = recordingLogger();
    const receiver = createReceiver({ secret, logger });
    let handled = 0;
    receiver.on('leave.approved', () => {
      handled++;
    });
    // `{ waitUntil: ctx.waitUntil }` loses its `this` on Workers, and the call throws.
    const platform = {
      waitUntil(): void {
        throw new TypeError('Illegal invocation');
      },
    };
    for (let i = 0; i < 2; i++) {
      const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
      expect((await receiver.fetch(signed.toRequest(URL_), platform)).status).toBe(202);
    }
    await receiver.close();
    expect(handled).toBe(2);
    const said = logger.lines.filter((line) => line.level === 'warn' || line.level === 'error');
    expect(said).toHaveLength(1);
    expect(said[0]?.msg).toContain('receiver.fetch(request, ctx)');
  });

  it('calls waitUntil on the platform it was given, so ctx.waitUntil keeps its `this`', async () => {
    const logger = recordingLogger();
    const receiver = createReceiver({ secret, logger });
    receiver.on('leave.approved', () => {});
    class Context {
      readonly #kept: Promise<unknown>[] = [];
      get kept(): number {
        return this.#kept.length;
      }
      waitUntil(promise: Promise<unknown>): void {
        this.#kept.push(promise);
      }
    }
    const ctx = new Context();
    const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
    expect((await receiver.fetch(signed.toRequest(URL_), ctx)).status).toBe(202);
    expect(ctx.kept).toBe(1);
    await receiver.close();
    expect(logger.lines.filter((line) => line.level === 'warn' || line.level === 'error')).toEqual([]);
  });
});
