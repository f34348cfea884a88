// A BullMQ worker that waits a second after Redis refused it a job (out of memory, read-only), instead of asking again
// at once, thousands of times a second. Internal: not a subpath of the package.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Worker } from 'bullmq';

// BullMQ's fetch loop asks again at once when Redis refuses a fetch with a reply of its own (OOM under noeviction,
// READONLY on a replica after a failover), pausing only for a lost connection: the worker would spin, one error line
// per turn, thousands a second, for as long as Redis refuses. Such a refusal waits a second before the loop asks
// again; the receiver's close ends the wait. The jobs are still there, and run once Redis takes writes again.
const REFUSED_FETCH_PAUSE_MS = 1000;
/**
 * BullMQ's `Worker` class, its fetch paced after Redis refused it with a reply of its own.
 * @example
 * const worker = new (pacedWorker(Worker))(name, processor, { connection });
 */
export const pacedWorker = (Base: typeof Worker): typeof Worker =>
  class PacedWorker<D> extends Base<D> {
    #wake: AbortController | undefined;

    protected override async moveToActive(token: string, name?: string) {
      try {
        return await super.moveToActive(token, name);
      } catch (error) {
        if ((error as Error)?.name === 'ReplyError' && !this.closing) {
          if (this.#wake === undefined) {
            const wake = new AbortController();
            this.#wake = wake;
            this.once('closing', () => wake.abort());
          }
          await sleep(REFUSED_FETCH_PAUSE_MS, undefined, { signal: this.#wake.signal }).catch(() => {});
        }
        throw error;
      }
    }
  } as typeof Worker;
