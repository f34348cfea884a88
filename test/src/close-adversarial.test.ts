// close() against deliveries in every stage (verify, claim, queued, running), handlers that ignore their signal,
// twice at once and with no time at all: every event answered 202 ends processed or a dead letter, and close() ends
// at its deadline.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  byDefaultKeys,
  createMemoryQueue,
  createMemoryStore,
  createReceiver,
  type Receiver,
} from 'workforce-webhooks';
import { recordingLogger } from '../support/logger.js';
import { signedLeave } from '../support/ordering-scenario.js';

const secret = 'whsec_close_adversarial';

interface Run {
  readonly receiver: Receiver;
  readonly processed: Set<string>;
  readonly letGo: () => void;
}

// Half the handlers honour their signal, half ignore it (ending by themselves, or when let go); five records, so
// events of a record wait for its key. `processed` counts an event skipped as stale too: it is done with.
const build = (ordering: boolean, mode: 'queue' | 'inline'): Run => {
  const processed = new Set<string>();
  let letGo!: () => void;
  const released = new Promise<void>((resolve) => {
    letGo = resolve;
  });
  const receiver = createReceiver({
    secret,
    logger: recordingLogger(),
    store: createMemoryStore(),
    queue: createMemoryQueue({ concurrency: 4 }),
    mode,
    leaseMs: 600,
    ...(ordering
      ? {
          ordering: { key: byDefaultKeys() },
          onStale: (event: { id: string }) => void processed.add(event.id),
        }
      : {}),
  }).on(['leave.requested', 'leave.approved'], async (event, { signal }) => {
    if (event.type === 'leave.requested') await sleep(50 + Math.random() * 400, undefined, { signal });
    else await Promise.race([released, sleep(50 + Math.random() * 400)]);
    processed.add(event.id);
  });
  return { receiver, processed, letGo };
};

const deliveries = (count: number) =>
  Promise.all(
    Array.from({ length: count }, (_, i) =>
      signedLeave(secret, i % 2 === 0 ? 'leave.requested' : 'leave.approved', i % 60, `key-${i % 5}`),
    ),
  );

describe.each([
  { ordering: false, mode: 'queue' as const },
  { ordering: true, mode: 'queue' as const },
  { ordering: false, mode: 'inline' as const },
  { ordering: true, mode: 'inline' as const },
])('close() mid-traffic: ordering $ordering, $mode mode', ({ ordering, mode }) => {
  it.each([0, 1, 150, 800])(
    'timeoutMs %i: every 202 ends processed or a dead letter, none after close',
    {
      timeout: 30_000,
    },
    async (timeoutMs) => {
      const { receiver, processed, letGo } = build(ordering, mode);
      const signed = await deliveries(40);
      const answers = signed.slice(0, 30).map((delivery) => receiver.handle(delivery));
      await sleep(20);
      // Ten more caught mid-verify or mid-claim, and two closes at once.
      const late = signed.slice(30).map((delivery) => receiver.handle(delivery));
      const closes = [receiver.close({ timeoutMs }), receiver.close({ timeoutMs: 60_000 })];
      const ended = await Promise.race([
        Promise.all(closes).then(() => 'closed' as const),
        sleep(timeoutMs + 5000, 'still closing' as const),
      ]);
      letGo();
      expect(ended).toBe('closed');
      const answered = await Promise.all([...answers, ...late]);
      const after = await receiver.handle(signed[0]!);
      expect(after.status).toBe(503);

      await sleep(600);
      const letters = new Set((await receiver.deadLetters({ limit: 1000 })).items.map((l) => l.event.id));
      for (const [i, answer] of answered.entries()) {
        const id = signed[i]!.event.id;
        if (answer.status === 202 && mode === 'queue')
          expect(processed.has(id) || letters.has(id), `${id}: ${answer.status}`).toBe(true);
        else expect([200, 202, 500, 503], `${id}`).toContain(answer.status);
        if (answer.status === 503)
          expect(JSON.parse(String(answer.body))).toEqual({ error: 'shutting_down' });
        if (answer.status === 200) expect(processed.has(id)).toBe(true);
      }
    },
  );
});
