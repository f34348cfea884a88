// What the node:http based adapters (node, Express, Next's Pages Router, and Fastify's body parser) share: reading
// the raw bytes of an IncomingMessage and writing the core's answer. Internal: not a subpath of the package.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerResponse } from 'node:http2';
import type { Readable } from 'node:stream';
import getRawBody from 'raw-body';
import type { HandleInput } from '../src/receiver.js';
import type { WebhookResponse } from '../src/responses.js';

/**
 * Writes an answer now or once it comes; `done` when written, `failed` if writing threw.
 * @example
 * answerNode(res, handle(input), resolve, reject);
 */
export function answerNode(
  res: ServerResponse,
  answer: WebhookResponse | Promise<WebhookResponse>,
  done: () => void,
  failed: (error: unknown) => void,
): void {
  if (answer instanceof Promise) {
    answer.then((response) => answerNode(res, response, done, failed), failed);
    return;
  }
  try {
    writeResponse(res, answer);
  } catch (error) {
    failed(error);
    return;
  }
  done();
}

const DIGITS = /^\d{1,15}$/;

/** How `readNodeInput` reads: the byte limit and the deadline for the whole body. */
export interface NodeReadLimits {
  /** Bytes; a larger body is refused (`maxBodyBytes`). */
  readonly limit: number;
  /** Milliseconds from the start of the read to its last byte (`bodyTimeoutMs`). */
  readonly timeoutMs: number;
}

/**
 * `readNodeRequest` with a callback, called at once when there is nothing to read. The bytes are read as sent
 * (raw-body), up to `limit` and within `timeoutMs`: a declared length over the limit is refused before reading, a
 * body that grows past it is cut off, one that is not complete in time is refused as `timeout`.
 * @example
 * readNodeInput(req, { limit: receiver.maxBodyBytes, timeoutMs: receiver.bodyTimeoutMs }, fix, (input) => ...);
 */
export function readNodeInput(
  req: IncomingMessage,
  { limit, timeoutMs }: NodeReadLimits,
  fix: string,
  done: (input: HandleInput) => void,
): void {
  const { method, headers } = req;
  if (method !== 'POST') {
    done({ method, headers });
    return;
  }
  if (req.readableEnded) {
    done({ method, headers, bodyProblem: { kind: 'raw_body_unavailable', fix } });
    return;
  }
  readBody(req, declaredLength(headers), limit, timeoutMs, (body) => {
    done(
      typeof body === 'string' ? { method, headers, bodyProblem: { kind: body } } : { method, headers, body },
    );
  });
}

/**
 * The request's `content-length` as a number, or undefined when absent or not plain digits.
 * @example
 * const declared = declaredLength(req.headers);
 */
export function declaredLength(headers: IncomingHttpHeaders): number | undefined {
  const length = headers['content-length'];
  return length !== undefined && DIGITS.test(length) ? Number(length) : undefined;
}

/** Why a body could not be had: over the limit, cut short, broken or decoded, or not complete in time. */
export type BodyFailure = 'too_large' | 'unreadable' | 'timeout';

/**
 * Reads a body stream to its end with raw-body, up to `limit` bytes and within `timeoutMs`, and calls `done`
 * once: with the bytes, or with why not. A declared length over the limit and a stream that decodes to text (its
 * chunks would no longer be the bytes that were signed) are refused before a byte is read; past the limit or the
 * deadline it stops reading, and the answer closes the connection.
 * @example
 * readBody(req, declaredLength(req.headers), limit, 10_000, (body) => ...);
 */
export function readBody(
  stream: Readable,
  declared: number | undefined,
  limit: number,
  timeoutMs: number,
  done: (body: Uint8Array | BodyFailure) => void,
): void {
  let finished = false;
  const finish = (body: Uint8Array | BodyFailure): void => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    done(body);
  };
  // A client that declares more than it sends, or trickles, would hold the connection and its buffer until the
  // server's own timeout (300 s in Node's defaults); the sender itself gives up after 10 s.
  const timer = setTimeout(() => {
    stream.pause();
    finish('timeout');
  }, timeoutMs);
  getRawBody(stream, { length: declared ?? null, limit }, (error, body) => {
    if (error === null || error === undefined) finish(body);
    else finish((error as { type?: string }).type === 'entity.too.large' ? 'too_large' : 'unreadable');
  });
}

/**
 * Writes the core's answer. When the request was not read to its end (a refused oversized or late body), the
 * connection is closed after the answer instead of reading the rest; on Node's HTTP/2 compatibility server, the
 * request's stream.
 * @example
 * writeResponse(res, await receiver.handle(input));
 */
export function writeResponse(res: ServerResponse, response: WebhookResponse): void {
  if (res.headersSent) return;
  const { req } = res;
  if (!req.readableEnded) {
    if (req.httpVersionMajor === 2) {
      writeHttp2(res as unknown as Http2ServerResponse, response);
      return;
    }
    res.setHeader('connection', 'close');
  }
  res.writeHead(response.status, response.headers);
  res.end(response.body);
}

// HTTP/2 has no `connection` header (Node drops it with a warning): the stream is closed once the answer is sent,
// or it and its unread body stay open and a graceful close waits on them (RFC 9113 section 8.1 lets a server reset
// a stream after a complete response; close() waits for the answer to be written, then resets with NO_ERROR).
function writeHttp2(res: Http2ServerResponse, { status, headers, body }: WebhookResponse): void {
  res.writeHead(status, withoutConnection(headers));
  res.end(body);
  res.stream.close();
}

/**
 * An answer's headers for HTTP/2, which has no `connection` header (Node drops one with a warning).
 * @example
 * reply.headers(withoutConnection(response.headers));
 */
export function withoutConnection(headers: Readonly<Record<string, string>>): Record<string, string> {
  const { connection: _, ...rest } = headers;
  return rest;
}
