// Text BullMQ's Postgres backend cannot store as it is (a NUL, a lone surrogate), kept exact or made storable.
// Internal: not a subpath of the package.
import type { JobData } from './bullmq-job.js';
import { holdsEveryCharacter } from './postgres-migrate.js';

// A NUL, which `text` refuses and `jsonb` refuses escaped, or a UTF-16 surrogate standing alone (the `u` flag reads a
// pair as one code point), which `jsonb` refuses escaped and `text` would get as U+FFFD.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the NUL is what is looked for.
const UNSTORABLE = /[\u0000\p{Surrogate}]/u;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the NUL is what is looked for.
const UNSTORABLE_ALL = /[\u0000\p{Surrogate}]/gu;
// SQLSTATE untranslatable_character (`\u0000` or a lone surrogate escaped in jsonb) and character_not_in_repertoire
// (a NUL in text).
const REFUSED = new Set(['22P05', '22021']);

/**
 * A job's data as BullMQ's Postgres backend keeps an event it would refuse: the event as its JSON text (escapes a
 * `jsonb` string holds as they are), beside the id and type the dead-letter reads and filters look at.
 * @example
 * const stored: StoredJobData = storableJob(job);
 */
export type StoredJobData = JobData & { readonly eventText?: string };

/**
 * `text` with each NUL and lone surrogate replaced by U+FFFD, as `pg` sends a lone surrogate: for what is only read
 * (a failure's message, its class); the same string when there is none.
 * @example
 * const reason = storableText(error.message);
 */
export function storableText(text: string): string {
  return UNSTORABLE.test(text) ? text.replace(UNSTORABLE_ALL, '\uFFFD') : text;
}

const unstorable = (text: unknown): boolean => typeof text === 'string' && UNSTORABLE.test(text);

/**
 * `error` as BullMQ's Postgres backend can record it (its message the failure's reason, its stack the trace, its
 * class kept on the job's data): `error` itself, or when one of those holds a NUL or a lone surrogate, an Error of its
 * class's name with each made storable and `error` as its cause. A record refused leaves the job to stall: run again
 * outside its attempts, then failed as stalled, its own failure lost.
 * @example
 * throw onPostgres(job) ? storableError(error) : error;
 */
export function storableError(error: unknown): unknown {
  let name: unknown;
  let message: unknown;
  let stack: unknown;
  // A thrown value that throws when looked at (null, a revoked Proxy) is BullMQ's to record as it can.
  try {
    ({ name, message, stack } = error as Error);
  } catch {
    return error;
  }
  if (!unstorable(name) && !unstorable(message) && !unstorable(stack)) return error;
  const kept = new Error(typeof message === 'string' ? storableText(message) : undefined, { cause: error });
  if (typeof name === 'string') kept.name = storableText(name);
  kept.stack = typeof stack === 'string' ? storableText(stack) : `${kept.name}: ${kept.message}`;
  return kept;
}

/**
 * True when Postgres refused a statement for text it cannot hold (a NUL, a lone surrogate): the same data fails
 * every time, so it is written again as `storableJob` makes it.
 * @example
 * await queue.add(name, job, opts).catch((error) => { if (!refusedText(error)) throw error; return queue.add(name, storableJob(job), opts); });
 */
export function refusedText(error: unknown): boolean {
  return REFUSED.has((error as { code?: unknown } | null)?.code as string);
}

/**
 * The job's data that BullMQ's Postgres backend stores whatever the event holds: the event as its exact JSON text
 * (`storedJob` reads it back), the failure's message and class made storable.
 * @example
 * await queue.add(JOB_NAME, storableJob(job), { jobId: job.event.id, attempts });
 */
export function storableJob(data: StoredJobData): StoredJobData {
  const kept = storableFailure(data);
  if (kept.eventText !== undefined) return kept;
  const { event } = kept;
  // The id is a uuid; the type stays for the dead-letter filter (one holding a NUL is never asked for).
  return {
    ...kept,
    event: { ...event, type: storableText(event.type), apiVersion: storableText(event.apiVersion), data: {} },
    eventText: asciiJson(event),
  } as StoredJobData;
}

/**
 * The job's data with its exact event, as it was queued: `data` itself when it was stored as it is.
 * @example
 * const data = storedJob(job.data);
 */
export function storedJob(data: StoredJobData): JobData {
  if (typeof data.eventText !== 'string') return data;
  const { eventText, ...rest } = data;
  return { ...rest, event: JSON.parse(eventText) };
}

// Past ASCII, each UTF-16 code unit as a `\u` escape: text any server encoding holds (a LATIN1 database refuses the
// characters it lacks, in the same SQLSTATE), which JSON.parse reads back exact.
const PAST_ASCII = /[\u0080-\uffff]/g;
const asciiJson = (value: unknown): string =>
  JSON.stringify(value).replace(
    PAST_ASCII,
    (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );

// JSON.stringify writes a NUL and a lone surrogate as `\u` escapes (a pair is written as it is): refused text shows
// only as one.
const REFUSED_ESCAPE = /\\u(?:0000|d[89a-f])/i;

/**
 * `data` as `writeDataUnderLock` writes it: its JSON, with a failure's class or message holding what Postgres refuses
 * made storable, and an event holding it kept as its exact text, so the attempt's record is never refused.
 * @example
 * await backend.query(WRITE_UNDER_LOCK, [queueName, id, storableJson(data), token]);
 */
export function storableJson(data: StoredJobData): string {
  const text = JSON.stringify(data);
  if (!REFUSED_ESCAPE.test(text)) return text;
  const kept = JSON.stringify(storableFailure(data));
  return REFUSED_ESCAPE.test(kept) ? JSON.stringify(storableJob(data)) : kept;
}

// The failure's class and message, only ever read, made storable; `data` itself when they are.
function storableFailure(data: StoredJobData): StoredJobData {
  const { lastError, failedInline } = data;
  const name = lastError === undefined ? undefined : storableText(lastError);
  const message = failedInline === undefined ? undefined : storableText(failedInline);
  if (name === lastError && message === failedInline) return data;
  return {
    ...data,
    ...(name === undefined ? {} : { lastError: name }),
    ...(message === undefined ? {} : { failedInline: message }),
  };
}

/**
 * What keeps BullMQ's Postgres backend from running on the database `pool` reaches, with the fix; undefined when its
 * encoding holds every character (UTF8, or SQL_ASCII, which stores the bytes it is sent). A one-byte encoding
 * (LATIN1) refuses BullMQ's own statements, whose text holds characters it lacks: every event is refused (503 on every
 * delivery, none accepted) and every fetch of the worker fails.
 * @example
 * const problem = await encodingProblem(pool);
 * if (problem !== undefined) logger.error({ queue: name }, problem);
 */
export async function encodingProblem(pool: {
  connect(): Promise<{ query(text: string): Promise<{ rows: Record<string, unknown>[] }>; release(): void }>;
}): Promise<string | undefined> {
  const client = await pool.connect();
  let encoding: unknown;
  try {
    ({ encoding } =
      (await client.query(`SELECT current_setting('server_encoding') AS encoding`)).rows[0] ?? {});
  } finally {
    client.release();
  }
  if (typeof encoding !== 'string' || holdsEveryCharacter(encoding)) return undefined;
  return `workforce-webhooks: the Postgres database of the BullMQ queue has the encoding ${encoding}, not UTF8, which refuses BullMQ's own statements: every event is refused (503) and no job runs; create the database with UTF8 (CREATE DATABASE <name> ENCODING 'UTF8' TEMPLATE template0) and point the queue's connection at it`;
}
