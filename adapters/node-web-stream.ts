// A Node request's body as a Web ReadableStream, built from its events alone: no Node module is imported, so the
// Next adapters that use it still bundle for the edge. Internal: not a subpath of the package.
import type { IncomingMessage } from 'node:http';

/**
 * The body of `req` as a Web stream that reads only as fast as it is pulled; cancelling it pauses the request
 * (the answer then closes the connection rather than read the rest), and a request closed before its end errors it.
 * @example
 * const body = await readStreamBody(webStreamOf(req), declared, limit, timeoutMs);
 */
export function webStreamOf(req: IncomingMessage): ReadableStream<Uint8Array> {
  let settled = false;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const settle = (end: () => void): void => {
          if (settled) return;
          settled = true;
          end();
        };
        req.on('data', (chunk: Uint8Array) => {
          if (settled) return;
          controller.enqueue(chunk);
          // Backpressure: Node keeps the rest in the socket until the reader asks for more.
          if ((controller.desiredSize ?? 0) <= 0) req.pause();
        });
        req.once('end', () => settle(() => controller.close()));
        req.once('error', (error) => settle(() => controller.error(error)));
        // A client gone mid-body: 'close' without 'end' (and, on some Node versions, no 'error').
        req.once('close', () =>
          settle(() => controller.error(new Error('the request closed before its end'))),
        );
      },
      pull() {
        req.resume();
      },
      cancel() {
        settled = true;
        req.pause();
      },
    },
    { highWaterMark: 1 },
  );
}
