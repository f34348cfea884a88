// The BullMQ queue's dead letters: its failed jobs, read a page at a time in failure order, and taken out one by one.
// Internal: not a subpath of the package.
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { type CheckedDeadLetterFilter, deadLetterFilter, pageLimit } from '../src/dead-letters.js';
import { ConfigurationError } from '../src/errors.js';
import type { DeadLetter, DeadLetterPage, DeadLetterQuery } from '../src/queue.js';
import { type EventJob, isEventData, type JobData } from './bullmq-job.js';
import { postgresPool } from './bullmq-postgres-letter.js';
import { type LetterRow, readLetterRows } from './bullmq-postgres-page.js';
import { storedJob } from './bullmq-postgres-text.js';
import { LUA_BELOW } from './redis-script.js';

// One page of BullMQ's failed set (scored by failure time), newest first, from just after the cursor's position,
// whether or not the cursor's own job is still there (replayed or discarded since). The ties of a failure time come
// by their ids' bytes, highest first, so a binary search over them finds the first id below the cursor's (one
// ZREVRANGE per halving: ten for a thousand ties). Ids are compared byte by byte, as Redis orders them. One atomic
// read, so failures arriving meanwhile shift nothing.
const FAILED_PAGE = `local key, score, id = KEYS[1], ARGV[1], ARGV[2]
${LUA_BELOW}local start = 0
if score ~= '' then
  start = redis.call('ZCOUNT', key, '(' .. score, '+inf')
  local stop = start + redis.call('ZCOUNT', key, score, score)
  while start < stop do
    local middle = math.floor((start + stop) / 2)
    if below(redis.call('ZREVRANGE', key, middle, middle)[1], id) then stop = middle else start = middle + 1 end
  end
end
return redis.call('ZREVRANGE', key, start, start + tonumber(ARGV[3]) - 1, 'WITHSCORES')`;

/** A position in the failed set: a job's failure time (its score, as Redis wrote it) and its id. */
interface FailedCursor {
  readonly score: string;
  readonly id: string;
}

const cursorOf = ({ score, id }: FailedCursor): string => `${score}:${id}`;
function parseCursor(cursor: string | undefined): FailedCursor | undefined {
  if (cursor === undefined) return undefined;
  // A cursor is a string this queue gave; anything else (a number, from JavaScript) is refused, as on the memory queue.
  if (typeof cursor !== 'string')
    throw new ConfigurationError('deadLetters cursor is not one this queue gave');
  const colon = cursor.indexOf(':');
  const score = cursor.slice(0, colon);
  if (colon < 1 || colon === cursor.length - 1 || !/^\d{1,17}$/.test(score))
    throw new ConfigurationError('deadLetters cursor is not one this queue gave');
  return { score, id: cursor.slice(colon + 1) };
}

// Newest first: a higher score, or the same score and a higher id (Redis orders ties by bytes, as `<` does here).
const isAfter = (entry: FailedCursor, cursor: FailedCursor | undefined): boolean =>
  cursor === undefined ||
  Number(entry.score) < Number(cursor.score) ||
  (entry.score === cursor.score && entry.id < cursor.id);

/**
 * A failure as BullMQ keeps one: only its message, so the class kept beside it on the job's data is put back.
 * @example
 * throw keptError(job.data.failedInline, job.data.lastError);
 */
export function keptError(message: string | undefined, name: string | undefined): Error {
  const error = new Error(message);
  if (name !== undefined) error.name = name;
  return error;
}
/** What a dead letter is made of: a failed job's data, attempts, failure time and kept message. */
type FailedJob = Pick<EventJob, 'data' | 'attemptsMade' | 'finishedOn'> & {
  readonly failedReason: string | undefined;
};
// A dead letter's error: the message BullMQ kept, with the class kept on the job.
const storedError = (job: FailedJob): Error => keptError(job.failedReason, job.data.lastError);

/**
 * The dead letter a failed job is, with `error` as its failure. The trace link is kept on the letter (and on the
 * job, which a replay queues again) for replays to link back.
 * @example
 * void hooks.onDeadLetter(letterOf(job, error));
 */
export const letterOf = (job: FailedJob, error: unknown): DeadLetter => ({
  // An event kept as its exact JSON text (Postgres refused it as it is), as it came.
  event: storedJob(job.data).event,
  deliveryId: job.data.deliveryId,
  attempts: (job.data.attemptsMade ?? 0) + job.attemptsMade,
  error,
  failedAt: job.finishedOn ?? Date.now(),
  ...(job.data.trace === undefined ? {} : { trace: job.data.trace }),
});

/**
 * One page of the queue's dead letters, newest first. On Redis (`connect` given: the query is checked before it is
 * called) it reads one page of ids and then only those jobs (never `getFailed(0, -1)`, which loads them all); on
 * BullMQ's Postgres backend, one indexed read of the page's rows; another backend's are read through BullMQ.
 * @example
 * const page = await readDeadLetters(queue, () => usable().then(() => producer), { limit: 50 });
 */
export async function readDeadLetters(
  queue: Queue<JobData>,
  connect: (() => Promise<Redis>) | undefined,
  query: DeadLetterQuery | undefined,
): Promise<DeadLetterPage> {
  const limit = pageLimit(query);
  const filter = deadLetterFilter(query);
  if (connect === undefined) {
    const pool = postgresPool(queue);
    if (pool === undefined) return failedPage(queue, limit, query?.cursor, filter);
    const after = parseCursor(query?.cursor);
    const { rows, more } = await readLetterRows(pool, queue, limit, after, query?.type, filter);
    const last = rows.at(-1);
    return {
      items: rows.map((row: LetterRow) => letterOf(row, storedError(row))),
      cursor:
        more && last !== undefined ? cursorOf({ score: String(last.finishedOn), id: last.id }) : undefined,
    };
  }
  const client = await connect();
  // `until` starts the read at the letters that failed before it, unless the cursor is further on.
  let after = parseCursor(query?.cursor);
  if (Number.isFinite(filter.until)) {
    const bound = { score: String(Math.ceil(filter.until)), id: '' };
    if (after === undefined || isAfter(bound, after)) after = bound;
  }
  // By type, letters must be read to be tested: a read looks at a bounded number of them.
  const budget = filter.byType ? 10 * limit : Number.POSITIVE_INFINITY;
  const items: DeadLetter[] = [];
  let examined = 0;
  for (;;) {
    // Without a type filter one more than the page, to know whether another follows.
    const asked = filter.byType ? limit : limit + 1 - items.length;
    const flat = (await client.eval(
      FAILED_PAGE,
      1,
      queue.keys.failed!,
      after?.score ?? '',
      after?.id ?? '',
      asked,
    )) as string[];
    let ended = flat.length / 2 < asked;
    const window: FailedCursor[] = [];
    for (let i = 0; i < flat.length; i += 2) {
      const entry = { id: flat[i]!, score: flat[i + 1]! };
      if (Number(entry.score) < filter.since) {
        ended = true;
        break;
      }
      window.push(entry);
    }
    const wanted = filter.byType ? window : window.slice(0, limit - items.length);
    const jobs = await Promise.all(wanted.map(({ id }) => queue.getJob(id) as Promise<EventJob | undefined>));
    for (let i = 0; i < wanted.length; i++) {
      const job = jobs[i];
      after = wanted[i]!;
      examined++;
      // Another app's job failed here is not a letter of ours (the worker logged it when it failed).
      if (job !== undefined && isEventData(job.data) && filter.type(job.data.event.type))
        items.push(letterOf(job, storedError(job)));
      if (items.length === limit) {
        const more = i + 1 < window.length || !ended;
        return { items, cursor: more ? cursorOf(after) : undefined };
      }
    }
    // Every letter up to the end (or to `since`) was looked at.
    if (ended && wanted.length === window.length) return { items, cursor: undefined };
    if (examined >= budget) return { items, cursor: cursorOf(after!) };
  }
}

// Another backend has no Lua: its failed jobs are read through BullMQ and put in the cursor's order here (the
// backend's own order of ties is not ours), and a page holds those strictly after the cursor, so arrivals shift
// nothing. It reads them all: dead letters are few, and kept until replayed. Their ids come from one read (one
// statement: reads by offset would let a letter discarded between two of them shift another out of both, and
// the backend orders ties differently from one read to the next), then the jobs a thousand at a time.
async function failedPage(
  queue: Queue<JobData>,
  limit: number,
  cursor: string | undefined,
  filter: CheckedDeadLetterFilter,
): Promise<DeadLetterPage> {
  const after = parseCursor(cursor);
  const ids = await queue.getRanges(['failed'], 0, -1);
  const all: EventJob[] = [];
  for (let start = 0; start < ids.length; start += 1000) {
    const jobs = await Promise.all(ids.slice(start, start + 1000).map((id) => queue.getJob(id)));
    // A letter discarded since the ids were read is gone.
    for (const job of jobs) if (job !== undefined && isEventData(job.data)) all.push(job as EventJob);
  }
  const position = (job: EventJob): FailedCursor => ({
    score: String(job.finishedOn ?? 0),
    id: job.id ?? '',
  });
  const found = all
    .filter((job) => {
      const failedAt = job.finishedOn ?? 0;
      return (
        isAfter(position(job), after) &&
        failedAt >= filter.since &&
        failedAt < filter.until &&
        filter.type(job.data.event.type)
      );
    })
    .sort((a, b) => (isAfter(position(b), position(a)) ? -1 : 1));
  const page = found.slice(0, limit);
  return {
    items: page.map((job) => letterOf(job, storedError(job))),
    cursor: found.length > limit ? cursorOf(position(page.at(-1)!)) : undefined,
  };
}
