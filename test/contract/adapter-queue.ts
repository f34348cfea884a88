// Contract scenarios of the default mode: failures retried then dead-lettered, back-pressure, drain on close, fast 202.

import { expect } from 'vitest';
import { createMemoryQueue, type DeadLetter, RETRY_AFTER_SECONDS } from 'workforce-webhooks';
import { type Answer, deferred, expectAnswer, LEAK_MARKER, post } from './adapter-client.js';
import { leaveApproved } from './adapter-dedupe.js';
import type { ContractContext } from './adapter-suite.js';

const ACCEPTED = { received: true };
const RETRY = { 'retry-after': String(RETRY_AFTER_SECONDS) };

/**
 * Registers the queue-mode scenarios.
 * @example
 * queueScenarios(context);
 */
export function queueScenarios({ scenario, open }: ContractContext): void {
  scenario('handler throws', async () => {
    const deadLettered = deferred<DeadLetter>();
    const { receiver, url } = await open({ onDeadLetter: (letter) => deadLettered.resolve(letter) });
    let failing = true;
    const attempts: number[] = [];
    const errors: unknown[] = [];
    const replayed = deferred();
    receiver.on('leave.approved', (_event, ctx) => {
      attempts.push(ctx.attempt);
      if (failing) throw new Error(`payroll system refused: ${LEAK_MARKER}`);
      replayed.resolve();
    });
    receiver.onError((error) => {
      errors.push(error);
    });
    const delivery = await leaveApproved();
    expectAnswer(await post(url, delivery), 202, ACCEPTED);

    const letter = await deadLettered.promise;
    expect(attempts).toEqual([1, 2, 3]);
    expect(errors).toHaveLength(3);
    expect(letter.event.id).toBe(delivery.event.id);
    expect(letter.attempts).toBe(3);
    expect((await receiver.deadLetters()).items.map((l) => l.event.id)).toEqual([delivery.event.id]);
    // The sender's retry of a dead-lettered event is still a duplicate: the dead letter is ours to replay.
    expectAnswer(await post(url, delivery), 200, { received: true, duplicate: true });

    failing = false;
    expect(await receiver.replay(delivery.event.id)).toBe(true);
    await replayed.promise;
    expect(attempts).toEqual([1, 2, 3, 1]);
    expect((await receiver.deadLetters()).items).toEqual([]);
    expect(await receiver.replay(delivery.event.id)).toBe(false);
  });

  scenario('queue full', async () => {
    const queue = createMemoryQueue({ maxQueued: 1, concurrency: 1, backoff: () => 1 });
    const { receiver, url } = await open({ queue });
    const started = deferred();
    const gate = deferred();
    const handled: string[] = [];
    receiver.on('leave.approved', async (event) => {
      started.resolve();
      await gate.promise;
      handled.push(event.id);
    });
    const first = await leaveApproved();
    const second = await leaveApproved();
    expectAnswer(await post(url, first), 202, ACCEPTED);
    await started.promise;
    expectAnswer(await post(url, second), 503, { error: 'queue_full' }, RETRY);
    gate.resolve();
    // Nothing was dropped: the refused event was not marked seen, so the sender's retry is accepted.
    expectAnswer(await post(url, second), 202, ACCEPTED);
    await receiver.close();
    expect(handled).toEqual([first.event.id, second.event.id]);
  });

  scenario('close under load', async () => {
    const { receiver, url } = await open({ queue: createMemoryQueue({ concurrency: 4 }) });
    const handled = new Set<string>();
    receiver.on('leave.approved', async (event) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      handled.add(event.id);
    });
    const before = await Promise.all(Array.from({ length: 20 }, () => leaveApproved()));
    for (const answer of await Promise.all(before.map((d) => post(url, d))))
      expectAnswer(answer, 202, ACCEPTED);

    // More arrive while the receiver closes: each is either taken (and then handled) or refused for later.
    const during = await Promise.all(Array.from({ length: 10 }, () => leaveApproved()));
    const inFlight = during.map((d) => post(url, d));
    const closed = receiver.close({ timeoutMs: 5000 });
    const late = await post(url, await leaveApproved());
    expectAnswer(late, 503, { error: 'shutting_down' }, RETRY);
    const duringAnswers: Answer[] = await Promise.all(inFlight);
    await closed;

    for (const d of before) expect(handled.has(d.event.id)).toBe(true);
    during.forEach((d, i) => {
      const answer = duringAnswers[i]!;
      if (answer.status === 202) expect(handled.has(d.event.id)).toBe(true);
      else expectAnswer(answer, 503, { error: 'shutting_down' }, RETRY);
    });
    expect((await receiver.deadLetters()).items).toEqual([]);
  });

  scenario('slow handler', async () => {
    const { receiver, url } = await open();
    // Stands for a handler that takes seconds: it ends only when the test lets it.
    const gate = deferred();
    const started = deferred();
    let finished = false;
    receiver.on('leave.approved', async () => {
      started.resolve();
      await gate.promise;
      finished = true;
    });
    expectAnswer(await post(url, await leaveApproved()), 202, ACCEPTED);
    expect(finished).toBe(false);
    await started.promise;
    gate.resolve();
    await receiver.close();
    expect(finished).toBe(true);
  });
}
