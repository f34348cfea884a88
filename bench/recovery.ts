// Section 10: `kill -9` of a busy instance of the durable path, and the time until the last job it held is
// finished on another instance, with the package's defaults (lock duration, stalled-job check).
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { eventTemplate, svcHeaders } from './fixtures.js';
import { runSection, startRedis } from './redis-server.js';
import { emit, type Table } from './report.js';
import { type ServerProcess, startServer } from './server-process.js';
import { PATH } from './servers/common.js';

const HELD = 10; // the queue's default concurrency: the instance holds this many jobs when it dies
// The busy instance's handlers outlast the measurement (they are still running when it dies); the other
// instance's return at once, so the time measured is the takeover alone.
const BUSY_HANDLER_MS = 600_000;
const LIMIT_MS = 300_000;

const redis = await startRedis();
const admin = new Redis(redis.url);
const template = eventTemplate(1024);
const name = 'recovery';
const env = { BENCH_REDIS_URL: redis.url, BENCH_QUEUE: name };
const servers: ServerProcess[] = [];

const until = async (test: () => Promise<boolean>, what: string): Promise<void> => {
  const start = performance.now();
  while (!(await test())) {
    if (performance.now() - start > LIMIT_MS) throw new Error(`bench: ${what} not within ${LIMIT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

await runSection(
  redis,
  admin,
  async () => {
    const busy = await startServer('durable', 'package', {
      env: { ...env, BENCH_HANDLER_MS: String(BUSY_HANDLER_MS) },
    });
    servers.push(busy);
    for (let i = 0; i < HELD; i++) {
      const id = randomUUID();
      const text = template.fill(id);
      const response = await fetch(`http://127.0.0.1:${busy.port}${PATH}`, {
        method: 'POST',
        headers: svcHeaders(text, id),
        body: text,
      });
      if (response.status !== 202) throw new Error(`bench: expected 202, got ${response.status}`);
    }
    const active = `bull:${name}:active`;
    await until(async () => (await admin.llen(active)) >= HELD, 'the busy instance holding its jobs');
    const held = await admin.lrange(active, 0, -1);
    servers.push(await startServer('durable', 'package', { env }));
    console.error(`recovery: kill -9 of an instance holding ${held.length} jobs`);
    busy.child.kill('SIGKILL');
    const killed = performance.now();
    await until(async () => {
      const scores = await Promise.all(held.map((id) => admin.zscore(`bull:${name}:completed`, id)));
      return scores.every((score) => score !== null);
    }, 'the held jobs finished elsewhere');
    const seconds = (performance.now() - killed) / 1000;
    const table: Table = {
      title: `Durable path, recovery: kill -9 of an instance holding ${held.length} jobs, defaults`,
      columns: ['held jobs', 'kill -9 to the last of them finished on the other instance'],
      rows: [[String(held.length), `${seconds.toFixed(1)} s`]],
      note:
        'Two instances of the package with the Redis store and the BullMQ queue at their defaults; the first takes ' +
        'the deliveries and is killed while its handlers run, the second starts once the first holds every job and ' +
        'runs handlers that return at once: the time is the takeover (lock lapse, stalled-job check, the run).',
    };
    emit({
      tables: [table],
      targets: [
        {
          name: 'recovery after kill -9, seconds (defaults)',
          value: seconds,
          goal: 30,
          atMost: true,
          unit: 'count',
        },
      ],
    });
  },
  async () => {
    await Promise.all(servers.map((s) => s.stop()));
  },
);
