// The event loop's next turn and Node's async context, for work a queue starts by itself, never in a request's.

/**
 * Runs `run` on the next turn of the event loop, after the I/O callback that asked for it has written its answer
 * (`setImmediate`; runtimes without it, Workers and browsers, get a zero timeout).
 * @example
 * nextTurn(() => pump());
 */
// Next's edge runtime has a `setImmediate` that throws, and refuses bundles that name `process.getBuiltinModule`.
const edgeRuntime = typeof (globalThis as { EdgeRuntime?: unknown }).EdgeRuntime === 'string';

export const nextTurn: (run: () => void) => void =
  !edgeRuntime && typeof globalThis.setImmediate === 'function'
    ? (run) => void globalThis.setImmediate(run)
    : (run) => void setTimeout(run, 0);

// Node's async context (AsyncLocalStorage, and what builds on it: OpenTelemetry's context, a logger's request id).
// Looked up at run time, so that a runtime without node:async_hooks (an edge bundle) never imports it.
const asyncHooks = edgeRuntime
  ? undefined
  : ((globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.(
      'node:async_hooks',
    ) as typeof import('node:async_hooks') | undefined);

/**
 * `run` bound to the async context it is made in (where there is one), so that it never runs in the context of
 * whatever happened to call it.
 * @example
 * const onTurn = inThisContext(() => pump()); // made when the queue is
 */
export const inThisContext = <A extends unknown[]>(run: (...args: A) => void): ((...args: A) => void) =>
  asyncHooks === undefined ? run : asyncHooks.AsyncResource.bind(run);
