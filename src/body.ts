// Reading a Web `Request` body as bytes, refusing to buffer past a limit or to wait past a deadline.

/**
 * The body, or why it could not be had: over the limit, broken, not complete within the deadline, or `taken`:
 * something else read it or holds its stream (a misconfiguration, whose fix the caller names).
 */
export type BodyResult = Uint8Array | 'too_large' | 'unreadable' | 'timeout' | 'taken';

/** Ten seconds: the sender's own answer time (spec "Limits"); a body still arriving then is of no use. */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;

/**
 * Reads a request body up to `limit` bytes within `timeoutMs`: a larger declared length is refused unread, the
 * body is streamed and cancelled as soon as it passes the limit (whatever its `Content-Length` says), one not
 * complete in time is `timeout`, and one something else already read or locked is `taken`.
 * @example
 * const body = await readRequestBody(request, 1024 * 1024);
 */
export function readRequestBody(
  request: Request,
  limit: number,
  timeoutMs: number = DEFAULT_BODY_TIMEOUT_MS,
): Promise<BodyResult> {
  return readBodyWithin(request, limit, timeoutMs, false);
}

// A length is declared only when it is all digits: Number('') is 0 and Number('abc') NaN, and both would pass.
const DIGITS = /^\d{1,15}$/;

/**
 * A `Content-Length` value as a number, or undefined when absent or not plain digits. Internal.
 * @example
 * const declared = declaredLength(request.headers.get('content-length'));
 */
export function declaredLength(header: string | null | undefined): number | undefined {
  return header !== null && header !== undefined && DIGITS.test(header) ? Number(header) : undefined;
}

/**
 * `readRequestBody` for a host whose HTTP layer holds the body to its `Content-Length` (@hono/node-server's
 * request, read from Node's parser): a declared length within the limit is then read in one go. Internal.
 * @example
 * const body = await readBodyWithin(c.req.raw, limit, timeoutMs, c.env?.incoming !== undefined);
 */
export async function readBodyWithin(
  request: Request,
  limit: number,
  timeoutMs: number,
  lengthHeld: boolean,
): Promise<BodyResult> {
  // `bodyUsed`, not `body.locked`: on a lazy Request (@hono/node-server's) `body` builds the Web stream that the
  // one-go read below avoids.
  if (request.bodyUsed) return 'taken';
  const declared = declaredLength(request.headers.get('content-length'));
  if (declared !== undefined && declared > limit) return 'too_large';
  const body = await withDeadline(timeoutMs, (reading) =>
    lengthHeld && declared !== undefined ? readWhole(request) : readStream(request.body, limit, reading),
  );
  // A stream another reader holds fails to read and is left undisturbed; one that broke under this read is not.
  return body === 'unreadable' && !request.bodyUsed && request.body?.locked === true ? 'taken' : body;
}

/**
 * Reads a body stream up to `limit` bytes within `timeoutMs`, counting every byte: a `declared` length over the
 * limit is refused unread, a stream that passes it is cancelled. Internal (the Pages Router handler's reader).
 * @example
 * const body = await readStreamBody(stream, declaredLength(req.headers['content-length']), limit, 10_000);
 */
export function readStreamBody(
  stream: ReadableStream<Uint8Array>,
  declared: number | undefined,
  limit: number,
  timeoutMs: number,
): Promise<BodyResult> {
  if (declared !== undefined && declared > limit) return Promise.resolve('too_large');
  return withDeadline(timeoutMs, (reading) => readStream(stream, limit, reading));
}

// The stream reader in use, for the deadline to cancel.
interface Reading {
  reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
}

async function withDeadline(
  timeoutMs: number,
  read: (reading: Reading) => Promise<BodyResult>,
): Promise<BodyResult> {
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
    return await Promise.race([read(reading), late]);
  } finally {
    clearTimeout(timer);
  }
}

// The host's HTTP parser holds the body to its declared length, so read it in one go: on Node's fetch servers that
// skips building a Web stream, which costs more than the rest of the delivery. Anywhere else the header may be a
// Request's own (one rebuilt around a new stream keeps the old header), so the bytes are counted instead.
async function readWhole(request: Request): Promise<BodyResult> {
  try {
    return new Uint8Array(await request.arrayBuffer());
  } catch {
    return 'unreadable';
  }
}

// How long a refused body's cancel is waited for before the answer goes out.
const CANCEL_WAIT_MS = 1000;

// Waited for, but not for ever: workerd resets the connection of an answer sent while the upload it refuses is still
// coming in, unless the cancel went through first; and cancelling one branch of a tee (the body of a Request someone
// called clone() on) settles only once the other branch is cancelled too, where the 413 would wait for the body
// deadline and become a 408. Only a refused body pays the timer.
async function cancelled(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    reader.cancel().catch(() => {}),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, CANCEL_WAIT_MS);
    }),
  ]);
  clearTimeout(timer);
}

async function readStream(
  stream: ReadableStream<Uint8Array> | null,
  limit: number,
  reading: Reading,
): Promise<BodyResult> {
  if (stream === null) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    // Inside the try: a stream something else locked throws here, and a rejection would be no answer at all.
    const reader = stream.getReader();
    reading.reader = reader;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      // A stream built by hand may give text: not the bytes as sent, and no length to count against the limit.
      // isView, not instanceof: a sandbox (Next's edge runtime in development) may hand bytes from another realm.
      if (!ArrayBuffer.isView(value)) {
        reader.cancel().catch(() => {});
        return 'unreadable';
      }
      total += value.byteLength;
      if (total > limit) {
        await cancelled(reader);
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
