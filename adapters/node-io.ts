// What the node:http based adapters (node, Express, Next's Pages Router, and Fastify's body parser) share: reading
// the raw bytes of an IncomingMessage and writing the core's answer. Internal: not a subpath of the package.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
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

/**
 * `readNodeRequest` with a callback, called at once when there is nothing to read. The bytes are read as sent,
 * up to `limit`: a declared length over it is refused before reading, a body that grows past it is cut off, and
 * one chunk (the usual webhook) is handed over as is, never copied.
 * @example
 * readNodeInput(req, receiver.maxBodyBytes, fix, (input) => answerNode(res, handle(input), done, failed));
 */
export function readNodeInput(
  req: IncomingMessage,
  limit: number,
  fix: string,
  done: (input: HandleInput) => void,
): void {
  const { method, headers } = req;
  const declared = declaredLength(headers);
  const early = answerWithoutReading(req, declared, limit, fix);
  if (early !== undefined) {
    done(early);
    return;
  }
  readBody(req, declared, limit, (body) => {
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

/** Why a body could not be had: over the limit, or cut short, broken or decoded. */
export type BodyFailure = 'too_large' | 'unreadable';

/**
 * Reads a body stream to its end, up to `limit` bytes, and calls `done` once: with the bytes (one chunk is handed
 * over as is, never copied), or with why not. Past the limit it stops reading; the answer closes the connection.
 * @example
 * readBody(req, declaredLength(req.headers), limit, (body) => ...);
 */
export function readBody(
  stream: Readable,
  declared: number | undefined,
  limit: number,
  done: (body: Uint8Array | BodyFailure) => void,
): void {
  let first: Buffer | undefined;
  let chunks: Buffer[] | undefined;
  let received = 0;
  let finished = false;
  const finish = (body: Uint8Array | BodyFailure): void => {
    if (finished) return;
    finished = true;
    if (typeof body === 'string') {
      stream.removeListener('data', onData);
      stream.pause();
    }
    done(body);
  };
  const onData = (chunk: Buffer | string): void => {
    // A string would be decoded text, no longer the bytes that were signed (a stream some hook set an encoding on).
    if (typeof chunk === 'string') {
      finish('unreadable');
      return;
    }
    received += chunk.length;
    if (received > limit) finish('too_large');
    else if (first === undefined) first = chunk;
    else if (chunks === undefined) chunks = [first, chunk];
    else chunks.push(chunk);
  };
  const unreadable = (): void => finish('unreadable');
  stream.on('data', onData);
  stream.on('end', () => {
    if (declared !== undefined && received !== declared) unreadable();
    else finish(chunks !== undefined ? Buffer.concat(chunks, received) : (first ?? EMPTY));
  });
  stream.on('error', unreadable);
  // An aborted request closes without 'end'.
  stream.on('close', unreadable);
}

const EMPTY = new Uint8Array(0);

// The input when the body is not to be read: no POST, already consumed, declared too large, or decoded.
function answerWithoutReading(
  req: IncomingMessage,
  declared: number | undefined,
  limit: number,
  fix: string,
): HandleInput | undefined {
  const { method, headers } = req;
  if (method !== 'POST') return { method, headers };
  if (req.readableEnded) return { method, headers, bodyProblem: { kind: 'raw_body_unavailable', fix } };
  const refused = refuseBeforeReading(req, declared, limit);
  return refused === undefined ? undefined : { method, headers, bodyProblem: { kind: refused } };
}

/**
 * Why a body is refused before a byte of it is read: a declared length over the limit, or a stream that decodes
 * to text (decoded chunks would no longer be the bytes that were signed); undefined to go on and read it.
 * @example
 * const refused = refuseBeforeReading(req, declaredLength(req.headers), limit);
 */
export function refuseBeforeReading(
  stream: Readable,
  declared: number | undefined,
  limit: number,
): BodyFailure | undefined {
  if (declared !== undefined && declared > limit) return 'too_large';
  if (stream.readableEncoding !== null) return 'unreadable';
  return undefined;
}

/**
 * Writes the core's answer. When the request was not read to its end (a refused oversized body), the
 * connection is closed after the answer instead of reading the rest.
 * @example
 * writeResponse(res, await receiver.handle(input));
 */
export function writeResponse(res: ServerResponse, response: WebhookResponse): void {
  if (res.headersSent) return;
  if (!res.req.readableEnded) res.setHeader('connection', 'close');
  res.writeHead(response.status, response.headers);
  res.end(response.body);
}
