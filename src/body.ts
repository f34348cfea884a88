// Reading a Web `Request` body as bytes, refusing to buffer past a limit or to wait past a deadline.

/**
 * The body, or why it could not be had: over the limit, broken, not complete within the deadline, or `taken`:
 * something else read it or holds its stream (a misconfiguration, whose fix the caller names).
 */
export type BodyResult = Uint8Array | 'too_large' | 'unreadable' | 'timeout' | 'taken';

/** Ten seconds: the sender's own answer time (spec "Limits"); a body still arriving then is of no use. */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;

/**
 * Reads a request body up to `limit` bytes within `timeoutMs`: a larger declared length is refused unread, a body
 * without one is streamed and cancelled as soon as it passes the limit, one not complete in time is `timeout`, and
 * one something else already read or locked is `taken`.
 * @example
 * const body = await readRequestBody(request, 1024 * 1024);
 */
export async function readRequestBody(
  request: Request,
  limit: number,
  timeoutMs: number = DEFAULT_BODY_TIMEOUT_MS,
): Promise<BodyResult> {
  // `bodyUsed`, not `body.locked`: on a lazy Request (@hono/node-server's) `body` builds the Web stream that the
  // one-go read below avoids.
  if (request.bodyUsed) return 'taken';
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) return 'too_large';
  const reading: Reading = { reader: undefined };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => {
      // A streamed body stops being buffered; a body read in one go is left to the connection's close.
      reading.reader?.cancel().catch(() => {});
      resolve('timeout');
    }, timeoutMs);
  });
  try {
    const body = await Promise.race([read(request, declared !== null, limit, reading), late]);
    // A stream another reader holds fails to read and is left undisturbed; one that broke under this read is not.
    return body === 'unreadable' && !request.bodyUsed && request.body?.locked === true ? 'taken' : body;
  } finally {
    clearTimeout(timer);
  }
}

// The stream reader in use, for the deadline to cancel.
interface Reading {
  reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
}

async function read(
  request: Request,
  declared: boolean,
  limit: number,
  reading: Reading,
): Promise<BodyResult> {
  if (declared) {
    // A declared length within the limit is held to by the HTTP layer, so read it in one go: on Node's fetch
    // servers that skips building a Web stream, which costs more than the rest of the delivery.
    try {
      return new Uint8Array(await request.arrayBuffer());
    } catch {
      return 'unreadable';
    }
  }
  if (request.body === null) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    // Inside the try: a stream something else locked throws here, and a rejection would be no answer at all.
    const reader = request.body.getReader();
    reading.reader = reader;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        await reader.cancel().catch(() => {});
        return 'too_large';
      }
      chunks.push(value);
    }
  } catch {
    return 'unreadable';
  }
  // One chunk is the common case: hand it over without a copy.
  if (chunks.length === 1) return chunks[0]!;
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}
