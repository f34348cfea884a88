// The options of createReceiver, their defaults, and the checks that refuse impossible ones up front.
import type { ApiClient } from '../api/client.js';
import { ConfigurationError } from './errors.js';
import { type Logger, silentLogger } from './logger.js';
import { createMemoryQueue } from './memory-queue.js';
import type { DeadLetter, EventQueue } from './queue.js';
import { type Secret, secretList } from './signature.js';
import { createMemoryStore, DEFAULT_DONE_TTL_MS, type DedupeStore } from './store.js';

/** Options of `createReceiver`. */
export interface ReceiverOptions {
  /** The endpoint's signing secret (`whsec_...`), or several during rotation. */
  readonly secret: Secret;
  /** Largest allowed clock difference with the signature's `t`, both ways. Default 300. */
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
  /** pino-shaped; silent by default. Never given bodies or secrets. */
  readonly logger?: Logger;
  /** Called with every event whose handlers failed every attempt. */
  readonly onDeadLetter?: (letter: DeadLetter) => unknown;
  /** How long a claim holds before another delivery may take it over; renewed while handlers run. Default 30 000. */
  readonly leaseMs?: number;
  /** How long a done id is remembered. Default 72 h (longer than the sender's two days of retries). */
  readonly doneTtlMs?: number;
  /** A read-API client (`createApiClient` from `workforce-webhooks/api`), handed to handlers as `ctx.api`. */
  readonly api?: ApiClient;
}

/** Every option with its default applied; `secrets` is the checked list of secrets. */
export type ResolvedOptions = Required<Omit<ReceiverOptions, 'secret' | 'api' | 'onDeadLetter'>> &
  Pick<ReceiverOptions, 'api' | 'onDeadLetter'> & { readonly secrets: readonly string[] };

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
    store = createMemoryStore({ now }),
    queue = createMemoryQueue(),
    mode = 'queue',
    ackDeadlineMs = 8000,
    handlerTimeoutMs = 30_000,
    maxBodyBytes = 1024 * 1024,
    logger = silentLogger,
    leaseMs = 30_000,
    doneTtlMs = DEFAULT_DONE_TTL_MS,
    ...rest
  } = options;
  if (mode !== 'queue' && mode !== 'inline') throw new ConfigurationError(`mode must be 'queue' or 'inline'`);
  const numbers = { toleranceSeconds, ackDeadlineMs, handlerTimeoutMs, maxBodyBytes, leaseMs, doneTtlMs };
  for (const [name, value] of Object.entries(numbers)) {
    if (!Number.isFinite(value) || value <= 0)
      throw new ConfigurationError(`${name} must be a positive number`);
  }
  return {
    ...numbers,
    secrets: secretList(secret),
    now,
    store,
    queue,
    mode,
    logger,
    api: rest.api,
    onDeadLetter: rest.onDeadLetter,
  };
}
