// The options of createReceiver, their defaults, and the checks that refuse impossible ones up front.
import type { ApiClient } from '../api/client.js';
import { DEFAULT_BODY_TIMEOUT_MS } from './body.js';
import { ConfigurationError } from './errors.js';
import { createConsoleLogger, guardLogger, type Logger, silentLogger } from './logger.js';
import { createMemoryQueue } from './memory-queue.js';
import type { OrderingOptions } from './ordering.js';
import type { OrderingMark } from './ordering-mark.js';
import type { DeadLetter, EventQueue } from './queue.js';
import { createSecretSource, type SecretOption, type SecretSource } from './secret-source.js';
import { createMemoryStore, DEFAULT_DONE_TTL_MS, type DedupeStore } from './store.js';
import type { Telemetry } from './telemetry.js';
import { MAX_TIMER_MS } from './timer-limit.js';
import type { WorkforceEvent } from './types.js';

/**
 * Options of `createReceiver`; one of the wrong type, or a time in ms past 2^31 - 1 (about 24.8 days, the longest
 * a timer waits), throws a `ConfigurationError` naming it.
 */
export interface ReceiverOptions {
  /**
   * The endpoint's signing secret (`whsec_...`), several during rotation, or a function returning them, called at
   * each delivery. Unset (a build without it) is allowed: deliveries are then answered 500 `not_configured`.
   */
  readonly secret: SecretOption;
  /** Largest allowed clock difference with the signature's `t`, both ways. Default 300; at most 3600. */
  readonly toleranceSeconds?: number;
  /** The clock, in milliseconds like `Date.now`. */
  readonly now?: () => number;
  /** Where event ids are remembered. Default `createMemoryStore()`; several instances: `createRedisStore()`. */
  readonly store?: DedupeStore;
  /** Where accepted events wait. Default `createMemoryQueue()`; durable: `createBullmqQueue()`. */
  readonly queue?: EventQueue;
  /** `queue` (default): answer 202 at once, handlers run from the queue. `inline`: run handlers before answering. */
  readonly mode?: 'queue' | 'inline';
  /** Inline mode: answer 202 after this long and let the run finish in the background. Default 8000 (the sender waits 10 s). */
  readonly ackDeadlineMs?: number;
  /** Inline mode: one run's time limit; a run past it is aborted and handed to the queue. Default 30 000. */
  readonly handlerTimeoutMs?: number;
  /** Bodies over this many bytes are refused with 413. Default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** A body not complete this long after its read began is answered 408 and its connection closed. Default 10 000. */
  readonly bodyTimeoutMs?: number;
  /**
   * pino-shaped. Default: warnings and errors to the console (stderr); `false` silences it. Never given bodies or
   * secrets. A method of it that throws loses its line, nothing else.
   */
  readonly logger?: Logger | false;
  /** Called with every event whose handlers failed every attempt. */
  readonly onDeadLetter?: (letter: DeadLetter) => unknown;
  /** How long a claim holds before another delivery may take it over; renewed while handlers run. Default 30 000. */
  readonly leaseMs?: number;
  /**
   * Deadline of every dedupe store call: a claim not answered by then is answered 503 `store_unavailable` (with
   * `Retry-After`); a done mark, release or renewal is given up and logged. Holds for any store and any client
   * settings (a Redis that is alive but silent). Default 2000, well under the sender's 10 s.
   */
  readonly storeTimeoutMs?: number;
  /** Deadline of `queue.enqueue`: past it the delivery is answered 503 `queue_unavailable`. Default 2000. */
  readonly queueTimeoutMs?: number;
  /**
   * How long a done id is remembered. Default 72 h (longer than the sender's two days of retries); more than the
   * 2 × `toleranceSeconds` a signature is taken for, so a replay of a done delivery is never run again.
   */
  readonly doneTtlMs?: number;
  /** A read-API client (`createApiClient` from `workforce-webhooks/api`), handed to handlers as `ctx.api`. */
  readonly api?: ApiClient;
  /**
   * Spec rule 4 done by the receiver: one event per record key at a time, and never an older event of a record
   * over a newer one (see the README's ordering table). Off by default.
   */
  readonly ordering?: OrderingOptions;
  /** With `ordering`: called with each event skipped as stale, and the newer event that made it so. */
  readonly onStale?: (event: WorkforceEvent, newer: OrderingMark) => unknown;
  /**
   * Where deliveries, attempts, retries and dead letters are reported: `otelTelemetry()` from
   * `workforce-webhooks/otel`, or your own `Telemetry`. Off by default (and then costs nothing).
   */
  readonly telemetry?: Telemetry;
}

/** Every option with its default applied; `secrets` gives the checked secrets at each delivery. */
export type ResolvedOptions = Required<
  Omit<ReceiverOptions, 'secret' | 'logger' | 'api' | 'onDeadLetter' | 'ordering' | 'onStale' | 'telemetry'>
> &
  Pick<ReceiverOptions, 'api' | 'onDeadLetter' | 'ordering' | 'onStale' | 'telemetry'> & {
    readonly secrets: SecretSource;
    readonly logger: Logger;
  };

// Options that set a timer: past MAX_TIMER_MS Node fires it after 1 ms, so a limit that long would be none at all.
const TIMER_OPTIONS: ReadonlySet<string> = new Set([
  'ackDeadlineMs',
  'handlerTimeoutMs',
  'bodyTimeoutMs',
  'leaseMs',
  'storeTimeoutMs',
  'queueTimeoutMs',
]);
// The service's answer time (spec rule 2): a later answer counts as a failed delivery, and the event is sent again.
const SENDER_ANSWER_MS = 10_000;
// The replay window: the spec's reference receiver allows 300 s, and an hour is already generous. A larger value is a
// number of milliseconds written in seconds (300000 for 300 s is 83 h), which would let a captured delivery be
// replayed for days.
const MAX_TOLERANCE_SECONDS = 3600;
// What the receiver calls on a store and a queue (the optional members of DedupeStore and EventQueue aside).
const STORE_METHODS = ['claim', 'complete', 'release', 'renew'] as const;
const QUEUE_METHODS = ['start', 'enqueue', 'deadLetters', 'replay', 'discard', 'close'] as const;
const LOGGER_METHODS = ['debug', 'info', 'warn', 'error'] as const;
// Every option's name, at run time: where nothing checks types (plain JavaScript, a config object spread in), a
// misspelt one (`toleranceMs`, `ackDeadline`) would be left unread without a word.
const OPTION_NAMES = [
  'secret',
  'toleranceSeconds',
  'now',
  'store',
  'queue',
  'mode',
  'ackDeadlineMs',
  'handlerTimeoutMs',
  'maxBodyBytes',
  'bodyTimeoutMs',
  'logger',
  'onDeadLetter',
  'leaseMs',
  'storeTimeoutMs',
  'queueTimeoutMs',
  'doneTtlMs',
  'api',
  'ordering',
  'onStale',
  'telemetry',
] as const satisfies readonly (keyof ReceiverOptions)[];
// Every option of the interface is in the list: one added there and not here fails to compile.
const everyOption: [Exclude<keyof ReceiverOptions, (typeof OPTION_NAMES)[number]>] extends [never]
  ? true
  : never = true;
void everyOption;
const KNOWN_OPTIONS: ReadonlySet<string> = new Set(OPTION_NAMES);
const OPTION_SHAPE = /^[A-Za-z_$][\w$]{0,39}$/;

// A given value in an error message: numbers and strings as written, anything else by its kind (never its content).
const shown = (value: unknown): string =>
  typeof value === 'number' || typeof value === 'bigint'
    ? String(value)
    : typeof value === 'string'
      ? JSON.stringify(value)
      : value === null
        ? 'null'
        : Array.isArray(value)
          ? 'an array'
          : typeof value;

const hasMethods = (value: unknown, names: readonly string[]): boolean =>
  typeof value === 'object' &&
  value !== null &&
  names.every((name) => typeof (value as Record<string, unknown>)[name] === 'function');

function checkFunction(name: string, value: unknown, optional: boolean): void {
  if (typeof value === 'function' || (optional && value === undefined)) return;
  throw new ConfigurationError(`${name} must be a function, got ${shown(value)}`);
}

function checkObject(name: string, value: unknown, what: string): void {
  if (value === undefined || (typeof value === 'object' && value !== null && !Array.isArray(value))) return;
  throw new ConfigurationError(`${name} must be ${what}, got ${shown(value)}`);
}

function checkNumber(name: string, value: unknown): void {
  if (TIMER_OPTIONS.has(name)) {
    if (typeof value === 'number' && value > 0 && value <= MAX_TIMER_MS) return;
    throw new ConfigurationError(
      `${name} must be a number of milliseconds above 0 and at most ${MAX_TIMER_MS} (about 24.8 days, the longest a timer waits), got ${shown(value)}`,
    );
  }
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) return;
  throw new ConfigurationError(`${name} must be a positive number, got ${shown(value)}`);
}

function checkedStore(store: unknown): DedupeStore {
  if (hasMethods(store, STORE_METHODS)) return store as DedupeStore;
  throw new ConfigurationError(
    `store must be a DedupeStore (an object with claim, complete, release and renew functions, e.g. createRedisStore()), got ${shown(store)}`,
  );
}

function checkedQueue(queue: unknown): EventQueue {
  if (hasMethods(queue, QUEUE_METHODS)) return queue as EventQueue;
  throw new ConfigurationError(
    `queue must be an EventQueue (an object with start, enqueue, deadLetters, replay, discard and close functions, e.g. createBullmqQueue()), got ${shown(queue)}`,
  );
}

function checkedLogger(logger: unknown): Logger {
  if (logger === false) return silentLogger;
  // A logger that throws (a transport down) loses its line, never a delivery: log calls sit in catch blocks and
  // background work, where a throw would become an unhandled rejection.
  if (hasMethods(logger, LOGGER_METHODS)) return guardLogger(logger as Logger);
  throw new ConfigurationError(
    `logger must be a pino-shaped logger (an object with debug, info, warn and error functions) or false, got ${shown(logger)}`,
  );
}

// Refused, not said: each widens what a captured delivery can do when replayed, and nothing at delivery time shows it.
function checkReplayWindow(toleranceSeconds: number, doneTtlMs: number): void {
  if (toleranceSeconds > MAX_TOLERANCE_SECONDS)
    throw new ConfigurationError(
      `toleranceSeconds must be at most ${MAX_TOLERANCE_SECONDS} seconds, got ${toleranceSeconds} (milliseconds? ${toleranceSeconds} ms is toleranceSeconds: ${toleranceSeconds / 1000}): a signature ${toleranceSeconds} s old would be taken, so a captured delivery could be replayed for ${Math.round(toleranceSeconds / 360) / 10} h. Fix: leave toleranceSeconds unset (300, the spec's), or give it in seconds`,
    );
  // A signature is taken from toleranceSeconds before its `t` to toleranceSeconds after: an id forgotten within that
  // window lets a replay of the delivery run its handlers again.
  const windowMs = 2 * toleranceSeconds * 1000;
  if (doneTtlMs <= windowMs)
    throw new ConfigurationError(
      `doneTtlMs must be longer than the ${windowMs} ms a signature is taken for (toleranceSeconds before and after its time), got ${doneTtlMs}: an event id forgotten while its signature is still taken lets a replay of the delivery run its handlers again. Fix: leave doneTtlMs unset (72 h, longer than the service's two days of retries), or give it in milliseconds`,
    );
}

/**
 * Applies the defaults and throws a `ConfigurationError` for options that cannot work.
 * @example
 * const { secrets, mode, logger } = resolveOptions({ secret: 'whsec_...' });
 */
export function resolveOptions(options: ReceiverOptions): ResolvedOptions {
  if (options === null || typeof options !== 'object')
    throw new ConfigurationError('createReceiver needs options');
  const {
    secret,
    toleranceSeconds = 300,
    now = Date.now,
    store: givenStore,
    queue: givenQueue,
    mode = 'queue',
    ackDeadlineMs = 8000,
    handlerTimeoutMs = 30_000,
    maxBodyBytes = 1024 * 1024,
    bodyTimeoutMs = DEFAULT_BODY_TIMEOUT_MS,
    logger: givenLogger,
    leaseMs = 30_000,
    doneTtlMs = DEFAULT_DONE_TTL_MS,
    storeTimeoutMs = 2000,
    queueTimeoutMs = 2000,
    api,
    onDeadLetter,
    ordering,
    onStale,
    telemetry,
  } = options;
  if (mode !== 'queue' && mode !== 'inline')
    throw new ConfigurationError(`mode must be 'queue' or 'inline', got ${shown(mode)}`);
  // Checked before the defaults that use it: the memory store and the console logger read the clock.
  checkFunction('now', now, false);
  const numbers = {
    toleranceSeconds,
    ackDeadlineMs,
    handlerTimeoutMs,
    maxBodyBytes,
    bodyTimeoutMs,
    leaseMs,
    doneTtlMs,
    storeTimeoutMs,
    queueTimeoutMs,
  };
  for (const [name, value] of Object.entries(numbers)) checkNumber(name, value);
  checkReplayWindow(toleranceSeconds, doneTtlMs);
  checkFunction('onDeadLetter', onDeadLetter, true);
  checkFunction('onStale', onStale, true);
  checkObject(
    'ordering',
    ordering,
    'an object ({ key, stale, maxWaitMs }, each optional), or unset for no ordering',
  );
  checkObject('telemetry', telemetry, 'a Telemetry object, e.g. otelTelemetry()');
  checkObject('api', api, 'a read-API client, e.g. createApiClient()');
  const store = givenStore === undefined ? createMemoryStore({ now }) : checkedStore(givenStore);
  const queue = givenQueue === undefined ? createMemoryQueue() : checkedQueue(givenQueue);
  const logger = givenLogger === undefined ? createConsoleLogger({ now }) : checkedLogger(givenLogger);
  // Said, not refused: a config object may carry more than the receiver's options.
  // Names only of an identifier's shape: a key is the app's text, and logged it must not carry anything else.
  const unknown = Object.keys(options)
    .filter((name) => !KNOWN_OPTIONS.has(name))
    .map((name) => (OPTION_SHAPE.test(name) ? name : '(a name not shown)'));
  if (unknown.length > 0)
    logger.warn(
      { options: unknown },
      `workforce-webhooks: createReceiver does not know the option${unknown.length === 1 ? '' : 's'} ${unknown.map((name) => `\`${name}\``).join(', ')}, and ignores ${unknown.length === 1 ? 'it' : 'them'}. Fix: spell ${unknown.length === 1 ? 'it as one' : 'each as one'} of ${OPTION_NAMES.join(', ')}`,
    );
  // Said, not refused: it is harmless, but whoever set it expects events skipped as stale, and none ever is.
  if (onStale !== undefined && ordering === undefined)
    logger.warn(
      {},
      "workforce-webhooks: onStale is set but ordering is off, so no event is ever skipped as stale and onStale is never called. Fix: turn ordering on (ordering: {}, see the README's Ordering), or remove onStale",
    );
  // Said, not refused: the run still ends once, only its delivery is counted failed and sent again (then a duplicate).
  if (mode === 'inline' && ackDeadlineMs >= SENDER_ANSWER_MS)
    logger.warn(
      { ackDeadlineMs },
      `workforce-webhooks: ackDeadlineMs is ${ackDeadlineMs}, not under the service's 10 s answer time: an inline run longer than 10 s is answered after the service gave up on it, so the delivery is counted failed and sent again. Fix: leave ackDeadlineMs unset (8000) or under 10000; a run past it goes on after the 202, bounded by handlerTimeoutMs`,
    );
  return {
    ...numbers,
    secrets: createSecretSource(secret, logger),
    now,
    store,
    queue,
    mode,
    logger,
    api,
    onDeadLetter,
    ordering,
    onStale,
    telemetry,
  };
}
