// What stops one delivery attempt: its answer deadline (spec "Limits": 10 s), or close(), whichever comes first.

/** The signal an attempt is sent with, and `end()` to call once it is over. */
export interface AttemptStop {
  readonly signal: AbortSignal;
  end(): void;
}

/**
 * A signal aborted with a `TimeoutError` after `timeoutMs`, or with `closed`'s reason when that aborts first. One
 * controller, held by its own timer: Node may collect an `AbortSignal.timeout` that only `AbortSignal.any` refers
 * to, its timer with it, and an endpoint that never answers would then hold the attempt for ever.
 * @example
 * const stop = attemptStop(10_000, closed);
 * try { await fetch(url, { method: 'POST', body, signal: stop.signal }); } finally { stop.end(); }
 */
export function attemptStop(timeoutMs: number, closed: AbortSignal): AttemptStop {
  const stop = new AbortController();
  const timer = setTimeout(
    () => stop.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')),
    timeoutMs,
  );
  timer.unref?.();
  const cancel = (): void => stop.abort(closed.reason);
  if (closed.aborted) cancel();
  else closed.addEventListener('abort', cancel, { once: true });
  return {
    signal: stop.signal,
    end() {
      clearTimeout(timer);
      closed.removeEventListener('abort', cancel);
    },
  };
}
