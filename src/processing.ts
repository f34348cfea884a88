// What runs an accepted event: the dispatcher, wrapped by telemetry and ordering, started on the queue.
import { createDispatcher } from './dispatch.js';
import type { Logger } from './logger.js';
import type { ResolvedOptions } from './options.js';
import { createOrdering, type Ordering } from './ordering.js';
import type { DeadLetter, EventQueue, JobProcessor, QueuedEvent } from './queue.js';
import type { Registry } from './registry.js';
import type { DedupeStore } from './store.js';
import type { Telemetry, TelemetryFault } from './telemetry.js';
import { observeAttempts } from './telemetry-attempts.js';

/** What the receiver's inline runner and delivery path need of the processing the queue was started with. */
export interface Processing {
  /** The processor an inline run calls (ordering on: taking the key in place). */
  readonly inline: JobProcessor;
  readonly ordering: Ordering | undefined;
  /** Announces a dead letter (ordering on: its key given up first, so the newer events of its record go ahead). */
  readonly deadLetter: (letter: DeadLetter) => Promise<void>;
  readonly onRetry: ((job: QueuedEvent, attempt: number) => void) | undefined;
}

/**
 * Builds the processor from the options (telemetry observes each attempt, ordering takes each key) and starts the
 * queue with it.
 * @example
 * const processing = startProcessing({ options, store, queue, registry, telemetry, telemetryFault });
 */
export function startProcessing({
  options,
  store,
  queue,
  registry,
  logger,
  telemetry,
  telemetryFault,
}: {
  readonly options: Pick<
    ResolvedOptions,
    'api' | 'onDeadLetter' | 'ordering' | 'onStale' | 'leaseMs' | 'doneTtlMs' | 'storeTimeoutMs'
  >;
  readonly store: DedupeStore;
  readonly queue: EventQueue;
  readonly registry: Registry;
  readonly logger: Logger;
  /** Guarded (`guardTelemetry`), or undefined when off. */
  readonly telemetry: Telemetry | undefined;
  readonly telemetryFault: TelemetryFault;
}): Processing {
  const dispatcher = createDispatcher({
    registry,
    logger,
    api: options.api,
    onDeadLetter: options.onDeadLetter,
    begin: store.begin === undefined ? undefined : (eventId, signal) => store.begin!(eventId, signal),
  });
  const { onStale } = options;
  const ordering =
    options.ordering === undefined
      ? undefined
      : createOrdering({
          ...options.ordering,
          store: store.ordering,
          shared: store.inProcess !== true,
          leaseMs: options.leaseMs,
          doneTtlMs: options.doneTtlMs,
          timeoutMs: options.storeTimeoutMs,
          logger,
          onStale:
            telemetry?.staleSkipped === undefined
              ? onStale
              : (event, newer) => {
                  telemetry.staleSkipped!(event);
                  return onStale?.(event, newer);
                },
        });
  const process =
    telemetry === undefined
      ? dispatcher.process
      : observeAttempts(dispatcher.process, telemetry, telemetryFault);
  const onRetry = telemetry?.retried?.bind(telemetry);
  const deadLetter =
    ordering === undefined && telemetry?.deadLettered === undefined
      ? dispatcher.deadLetter
      : async (letter: DeadLetter): Promise<void> => {
          telemetry?.deadLettered?.(letter);
          await ordering?.deadLettered(letter);
          await dispatcher.deadLetter(letter);
        };
  queue.start({
    process:
      ordering === undefined
        ? process
        : ordering.wrap(process, queue.inProcess === true ? 'local' : 'durable'),
    onDeadLetter: deadLetter,
    onRetry,
    onLateReplay: telemetry?.replayed?.bind(telemetry),
    logger,
  });
  if (telemetry?.observeQueue !== undefined && queue.counts !== undefined)
    telemetry.observeQueue(() => queue.counts!());
  return {
    inline: ordering === undefined ? process : ordering.wrap(process, 'inline'),
    ordering,
    deadLetter,
    onRetry,
  };
}
