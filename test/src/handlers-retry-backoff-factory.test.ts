// A memory queue given the backoff factory instead of a backoff (from JavaScript): the failed handler is still retried,
// and the log line names the fix, never the function's source.
import { describe, expect, it } from 'vitest';
import { createMemoryQueue, createReceiver, exponentialBackoff } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { recordingLogger } from '../support/logger.js';

const secret = 'whsec_handlers_retry_backoff_factory';
const encoder = new TextEncoder();

describe('a handler retried on a queue given backoff: exponentialBackoff (not called)', () => {
  it('runs again after the default delay, and the error logged says to call it', async () => {
    const logger = recordingLogger();
    const receiver = createReceiver({
      secret,
      logger,
      queue: createMemoryQueue({ attempts: 2, backoff: exponentialBackoff as never }),
    });
    const attempts: number[] = [];
    receiver.on('leave.approved', (_event, ctx) => {
      attempts.push(ctx.attempt);
      if (ctx.attempt === 1) throw new Error('down once');
    });
    const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
    const answer = await receiver.handle({
      method: 'POST',
      headers: signed.headers,
      body: encoder.encode(signed.body),
    });
    expect(answer.status).toBe(202);
    await expect.poll(() => attempts, { timeout: 15_000 }).toEqual([1, 2]);
    await receiver.close();
    const failed = logger.lines.filter((line) => line.msg?.includes('the queue backoff failed'));
    expect(failed).toHaveLength(1);
    const said = String((failed[0]!.obj.err as Error).message);
    expect(said).toContain('exponentialBackoff() (called)');
    // Not the function's text: what it returned is named by its kind.
    expect(said).not.toContain('=>');
    expect(said).not.toContain('ceiling');
  });
});
