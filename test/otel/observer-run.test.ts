// A Telemetry's attempt observer gets the handlers to run in its own context: however it calls them (late, twice),
// each attempt runs them once, and its outcome is the handlers' alone.
import { afterEach, expect, it } from 'vitest';
import {
  type AttemptObserver,
  createMemoryQueue,
  createReceiver,
  type Receiver,
  type Telemetry,
} from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';

const secret = 'whsec_otel_observer_run_test';
const encoder = new TextEncoder();
// What the observers do after they returned, awaited before the handlers' runs are read.
const later: Promise<unknown>[] = [];

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close({ timeoutMs: 200 })));
});

async function runs(run: AttemptObserver['run']) {
  const ended: unknown[] = [];
  const telemetry: Telemetry = { attempt: () => ({ run, end: (failure) => void ended.push(failure) }) };
  const ran: string[] = [];
  const receiver = createReceiver({
    secret,
    logger: false,
    telemetry,
    queue: createMemoryQueue({ attempts: 1 }),
  }).on('leave.approved', (event) => {
    ran.push(event.id);
  });
  receivers.push(receiver);
  const signed = await createSignedDelivery({ secret, type: 'leave.approved' });
  const answer = await receiver.handle({
    method: 'POST',
    headers: signed.headers,
    body: encoder.encode(signed.body),
  });
  expect(answer.status).toBe(202);
  await answer.background;
  await Promise.all(later.splice(0));
  return { id: signed.event.id, ran, ended, letters: (await receiver.deadLetters()).items.length };
}

it('an observer whose run calls the handlers after it returned: they run once', async () => {
  const { id, ran, ended, letters } = await runs((handlers) => {
    later.push(new Promise((resolve) => setTimeout(resolve, 1)).then(handlers));
    return undefined as never;
  });
  expect({ ran, ended, letters }).toEqual({ ran: [id], ended: [undefined], letters: 0 });
});

it('an observer whose run calls the handlers twice: they run once', async () => {
  const { id, ran, ended, letters } = await runs((handlers) => {
    handlers();
    return handlers();
  });
  expect({ ran, ended, letters }).toEqual({ ran: [id], ended: [undefined], letters: 0 });
});
