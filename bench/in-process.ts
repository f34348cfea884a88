// Blocks of fresh deliveries through `receiver.handle`, in process: what the sections that compare receiver set-ups
// (ordering on and off, telemetry off and on) measure each set-up with.
import { randomUUID } from 'node:crypto';
import type { Receiver } from 'workforce-webhooks';
import { EVENT_TYPE, eventTemplate, svcHeaders } from './fixtures.js';

const template = eventTemplate(1024);

/** A receiver whose one handler counts the events it ran. */
export interface SetUp {
  readonly receiver: Receiver;
  done: number;
}

/**
 * Gives `receiver` the fixture's event handler, counting into `done`.
 * @example
 * const setUp = counted(createReceiver({ secret: SECRET }));
 */
export function counted(receiver: Receiver): SetUp {
  const setUp: SetUp = { receiver, done: 0 };
  receiver.on(EVENT_TYPE, () => {
    setUp.done++;
  });
  return setUp;
}

/**
 * Waits, a millisecond at a time, until `test` holds; throws after 60 s.
 * @example
 * await until(() => setUp.done >= target);
 */
export const until = async (test: () => boolean): Promise<void> => {
  for (let i = 0; !test(); i++) {
    if (i > 60_000) throw new Error('bench: handlers did not finish within 60 s');
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
};

/**
 * One block: `size` fresh 1 KB deliveries, `concurrent` at a time, then every handler awaited; this process's CPU per
 * delivery in microseconds (work of a queue's workers in this process included, a server's such as redis-server not).
 * @example
 * const micros = await blockCpu(setUp, 5000, 100);
 */
export async function blockCpu(setUp: SetUp, size: number, concurrent: number): Promise<number> {
  const inputs = Array.from({ length: size }, () => {
    const id = randomUUID();
    const text = template.fill(id);
    return { method: 'POST', headers: svcHeaders(text, id), body: Buffer.from(text) };
  });
  const target = setUp.done + size;
  const start = process.cpuUsage();
  for (let i = 0; i < size; i += concurrent) {
    const answers = await Promise.all(
      inputs.slice(i, i + concurrent).map((input) => setUp.receiver.handle(input)),
    );
    for (const answer of answers)
      if (answer.status !== 202) throw new Error(`bench: answered ${answer.status}`);
  }
  await until(() => setUp.done >= target);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / size;
}
