// Section 4: RSS while a million distinct events go through the receiver with a memory store capped at 100 000 ids.
import { randomUUID } from 'node:crypto';
import { createMemoryStore, createReceiver } from 'workforce-webhooks';
import { EVENT_TYPE, eventTemplate, SECRET, svcHeaders } from './fixtures.js';
import { pick } from './options.js';
import { emit, type Table } from './report.js';

const EVENTS = pick(300_000, 1_000_000);
const MAX = 100_000;
const SAMPLES = 10;
const BATCH = 200;

const receiver = createReceiver({ secret: SECRET, store: createMemoryStore({ max: MAX }) });
receiver.on(EVENT_TYPE, () => {});
const template = eventTemplate(1024);
const gc = (globalThis as { gc?: () => void }).gc;
const mb = (bytes: number): number => Math.round(bytes / 1024 / 1024);

// A batch of distinct deliveries at once, as concurrent requests would bring them; each queued job is awaited.
async function batch(): Promise<void> {
  await Promise.all(
    Array.from({ length: BATCH }, async () => {
      const id = randomUUID();
      const text = template.fill(id);
      const response = await receiver.handle({
        method: 'POST',
        headers: svcHeaders(text, id),
        body: Buffer.from(text),
      });
      if (response.status !== 202) throw new Error(`bench: expected 202, got ${response.status}`);
      await response.background;
    }),
  );
}

const rows: string[][] = [];
const rss: number[] = [];
for (let done = 0; done < EVENTS; ) {
  await batch();
  done += BATCH;
  if (done % (EVENTS / SAMPLES) === 0) {
    gc?.();
    const { rss: now, heapUsed } = process.memoryUsage();
    rss.push(now);
    rows.push([done.toLocaleString('en-US'), `${mb(now)} MB`, `${mb(heapUsed)} MB`]);
    console.error(`memory: ${done} events, rss ${mb(now)} MB`);
  }
}
await receiver.close();
// Plateau: once the store is full (2x max events), RSS may not keep growing with the number of events. RSS
// moves with the allocator, so three samples are averaged at each end.
const mean = (list: number[]): number => list.reduce((a, b) => a + b, 0) / list.length;
const fullAt = Math.ceil((2 * MAX * SAMPLES) / EVENTS) - 1;
const early = mean(rss.slice(fullAt, fullAt + 3));
const late = mean(rss.slice(-3));
const table: Table = {
  title: `Memory: ${EVENTS.toLocaleString('en-US')} distinct events, memory store max ${MAX.toLocaleString('en-US')}`,
  columns: ['events through', 'RSS (after gc)', 'heap used'],
  rows,
  note: `Mean RSS of the last three samples is ${(late / early).toFixed(2)}× that of the three from ${(2 * MAX).toLocaleString('en-US')} events on (the store full): ${late <= early * 1.1 ? 'a plateau' : 'still growing'}.`,
};
emit({
  tables: [table],
  targets: [
    {
      name: 'RSS growth once the store is full (last samples / first full samples)',
      value: late / early,
      goal: 1.1,
      atMost: true,
    },
  ],
});
