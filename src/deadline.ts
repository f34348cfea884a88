// The receiver's own deadline on a store or queue call: a backend that stops answering cannot hold a delivery.
import { WebhookError, type WebhookErrorCode } from './errors.js';

/**
 * Settles like `call`'s promise, or rejects with a `WebhookError` of `code` once `ms` pass first, whatever the
 * backend's client is configured to do (a silent Redis keeps a command waiting forever). The call is not
 * cancelled: it may still complete on the server later, so `expired` is given the call's still pending promise
 * when the deadline passes, for the caller to settle what it does if it lands (release a claim nobody will use);
 * `ended` is called once, when the call answers or the deadline passes, whichever comes first: with the answer and
 * the ms it took when it answered in time.
 * @example
 * const claim = await withDeadline(() => store.claim(id, leaseMs), 2000, 'store_unavailable', releaseIfClaimed);
 */
export function withDeadline<T>(
  call: () => T | PromiseLike<T>,
  ms: number,
  code: WebhookErrorCode,
  expired?: (pending: Promise<T>) => void,
  ended?: (answer?: T, tookMs?: number) => void,
): Promise<T> {
  // Read only for `ended`: the other callers pay no clock.
  const sent = ended === undefined ? 0 : performance.now();
  // A backend of the user's may throw instead of rejecting, or answer with any thenable: both become a promise.
  const pending = new Promise<T>((resolve) => resolve(call()));
  return new Promise<T>((resolve, reject) => {
    let open = true;
    const timer = setTimeout(() => {
      open = false;
      reject(new WebhookError(code, `no answer within ${ms} ms`));
      expired?.(pending);
      ended?.();
    }, ms);
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
        if (open) ended?.(value, performance.now() - sent);
        open = false;
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
        if (open) ended?.();
        open = false;
      },
    );
  });
}
