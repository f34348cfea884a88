// Running an event's handlers: one attempt, failures reported to onError, and dead letters announced.
import type { ApiClient } from '../api/client.js';
import { ConfigurationError } from './errors.js';
import type { Logger } from './logger.js';
import { type DeadLetter, HandlerFailure, type JobProcessor } from './queue.js';
import type { Registry } from './registry.js';
import type { HandlerContext, WorkforceEvent } from './types.js';

/** What `createDispatcher` needs. */
export interface DispatcherOptions {
  readonly registry: Registry;
  readonly logger: Logger;
  readonly api: ApiClient | undefined;
  readonly onDeadLetter: ((letter: DeadLetter) => unknown) | undefined;
}

/** The processor a queue runs jobs through, and the announcement of a dead letter. */
export interface Dispatcher {
  readonly process: JobProcessor;
  readonly deadLetter: (letter: DeadLetter) => Promise<void>;
}

const MISSING_API =
  'ctx.api needs a client: createReceiver({ secret, api: createApiClient({ apiKey, baseUrl }) })';

/**
 * Builds the processor: every matching handler not yet done runs side by side; the failures are reported to
 * `onError` and thrown as one `HandlerFailure` that remembers which handlers succeeded.
 * @example
 * const { process, deadLetter } = createDispatcher({ registry, logger, api, onDeadLetter });
 */
export function createDispatcher({ registry, logger, api, onDeadLetter }: DispatcherOptions): Dispatcher {
  const reportError = async (error: unknown, event: WorkforceEvent): Promise<void> => {
    for (const handler of registry.errorHandlers) {
      try {
        await handler(error, event);
      } catch (hookError) {
        logger.error({ err: hookError }, 'workforce-webhooks: an onError handler threw');
      }
    }
  };

  const process: JobProcessor = async (job, attempt) => {
    const { event } = job;
    const ctx: HandlerContext = {
      deliveryId: job.deliveryId,
      attempt: attempt.attempt,
      // Read on demand: the attempt makes its AbortController only when a handler asks for the signal.
      get signal() {
        return attempt.signal;
      },
      logger,
      get api() {
        if (api === undefined) throw new ConfigurationError(MISSING_API);
        return api;
      },
    };
    const completed = [...(job.completed ?? [])];
    const errors: unknown[] = [];
    await Promise.all(
      registry.match(event.type).map(async ({ index, handler }) => {
        if (completed.includes(index)) return;
        try {
          await handler(event, ctx);
          completed.push(index);
        } catch (error) {
          errors.push(error);
          logger.warn(
            { eventId: event.id, type: event.type, attempt: attempt.attempt, err: error },
            'workforce-webhooks: handler failed',
          );
          await reportError(error, event);
        }
      }),
    );
    if (errors.length > 0) throw new HandlerFailure(errors, completed);
  };

  const deadLetter = async (letter: DeadLetter): Promise<void> => {
    logger.error(
      { eventId: letter.event.id, type: letter.event.type, attempts: letter.attempts, err: letter.error },
      'workforce-webhooks: event dead-lettered after its last attempt',
    );
    try {
      await onDeadLetter?.(letter);
    } catch (error) {
      logger.error({ err: error }, 'workforce-webhooks: onDeadLetter threw');
    }
  };

  return { process, deadLetter };
}
