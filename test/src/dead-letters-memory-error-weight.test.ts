// What a memory dead letter keeps of its failure: what it names, not the payloads the error refers to.
import { types } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  createMemoryQueue,
  type DeadLetter,
  errorClassOf,
  HandlerFailure,
  type QueuedEvent,
  silentLogger,
} from 'workforce-webhooks';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const LETTERS = 2000;
const PAYLOAD = 200_000;

const job = (n: number): QueuedEvent => ({
  event: {
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    type: 'leave.approved',
    apiVersion: '2026-10-15',
    occurredAt: '2026-11-21T00:00:00.000Z',
    organizationId: '00000000-0000-4000-8000-000000000001',
    data: {},
  },
  deliveryId: `d${n}`,
});

// An HTTP client's error: a status and code beside the response and request it holds, each with a large body.
class HttpError extends Error {
  readonly code = 'ERR_BAD_RESPONSE';
  readonly status = 502;
  readonly response: { readonly body: string };
  readonly request: { readonly headers: Record<string, string> };

  constructor(n: number) {
    super(`the calendar answered 502 for ${n}`, { cause: new Error('upstream reset') });
    this.name = 'HttpError';
    // One flat string per error, each its own: 200 KB the letter must not keep.
    this.response = { body: Buffer.alloc(PAYLOAD, String(n % 10)).toString('latin1') };
    this.request = { headers: { authorization: 'Bearer secret' } };
  }
}

const weight = (): number => {
  gc();
  gc();
  const { heapUsed, external } = process.memoryUsage();
  return heapUsed + external;
};

describe('memory dead letters of errors that hold large payloads', () => {
  it('keep the name, message, stack, code, status and cause, not the response: 2 000 of them weigh little', {
    timeout: 300_000,
  }, async () => {
    // The test holds the originals from onDeadLetter for a while: the control that shows the weight is measured.
    const held: unknown[] = [];
    let heardOriginal = 0;
    const queue = createMemoryQueue({ attempts: 1, concurrency: 50, maxQueued: LETTERS });
    queue.start({
      process: (data) => {
        throw new HttpError(Number(data.deliveryId!.slice(1)));
      },
      onDeadLetter: async (letter: DeadLetter) => {
        // Called at once, with the failure as thrown.
        if (letter.error instanceof HttpError && letter.error.response.body.length === PAYLOAD)
          heardOriginal++;
        held.push(letter.error);
      },
      logger: silentLogger,
    });
    const before = weight();
    const results = [];
    for (let n = 0; n < LETTERS; n++) results.push(await queue.enqueue(job(n)));
    await Promise.all(results.map((result) => (result.status === 'queued' ? result.settled : undefined)));
    expect(heardOriginal).toBe(LETTERS);
    expect((await queue.counts!()).deadLetters).toBe(LETTERS);

    const withOriginals = weight();
    held.length = 0;
    const lettersOnly = weight();
    // The letters the queue keeps weigh at most a tenth of the payloads their errors held (events, messages, stacks).
    expect(lettersOnly - before).toBeLessThan((LETTERS * PAYLOAD) / 10);
    // The control: the originals the test held weighed their payloads, so the measure would see the letters'.
    expect(withOriginals - lettersOnly).toBeGreaterThan(LETTERS * PAYLOAD * 0.8);

    const { items } = await queue.deadLetters({ limit: 1 });
    const error = items[0]!.error as HttpError;
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toBeInstanceOf(Error);
    expect(types.isNativeError(error)).toBe(true);
    expect(errorClassOf(error)).toBe('HttpError');
    expect(error.message).toBe(`the calendar answered 502 for ${LETTERS - 1}`);
    expect(error.stack).toContain('HttpError: the calendar answered 502');
    expect(error.code).toBe('ERR_BAD_RESPONSE');
    expect(error.status).toBe(502);
    expect((error.cause as Error).message).toBe('upstream reset');
    expect(error.cause).toBeInstanceOf(Error);
    expect(error.response).toBeUndefined();
    expect(error.request).toBeUndefined();
    await queue.close({ timeoutMs: 5000 });
  });
});

describe('a memory dead letter of a handler failure', () => {
  it('keeps each handler error light, the handlers done, and ends a cause that loops', async () => {
    const looping = new Error('loops');
    looping.cause = looping;
    let heard: unknown;
    const queue = createMemoryQueue({ attempts: 1 });
    queue.start({
      process: () => {
        throw new HandlerFailure([new HttpError(7), looping, 'x'.repeat(100_000)], [1]);
      },
      onDeadLetter: async (letter) => {
        heard = letter.error;
      },
      logger: silentLogger,
    });
    const result = await queue.enqueue(job(7));
    if (result.status === 'queued') await result.settled;
    const kept = (await queue.deadLetters()).items[0]!.error as HandlerFailure;
    expect(kept).toBeInstanceOf(HandlerFailure);
    expect(kept).not.toBe(heard);
    expect(((heard as HandlerFailure).errors[0] as HttpError).response.body).toHaveLength(PAYLOAD);
    expect(errorClassOf(kept)).toBe('HttpError');
    expect(kept.completed).toEqual([1]);
    expect(kept.message).toBe('workforce-webhooks: 3 handler(s) failed');
    expect((kept.errors[0] as HttpError).status).toBe(502);
    expect((kept.errors[0] as HttpError).response).toBeUndefined();
    let cause = kept.errors[1] as Error;
    for (let depth = 0; cause?.cause !== undefined && depth < 1000; depth++) cause = cause.cause as Error;
    expect(cause.message).toBe('loops');
    expect(cause.cause).toBeUndefined();
    expect((kept.errors[2] as string).length).toBeLessThan(10_000);
    await queue.close({ timeoutMs: 5000 });
  });
});
