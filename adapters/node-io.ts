// What the node:http based adapters (node, Express and Fastify's body parser) share: reading the raw bytes of an
// IncomingMessage with raw-body. Internal: not a subpath of the package.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import getRawBody from 'raw-body';
import { declaredLength as lengthOf } from '../src/body.js';
import type { HandleInput } from '../src/receiver.js';
import { type BodyFailure, bodyProblemOf } from './node-failure.js';

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
 * body that grows past it is cut off, one that is not complete in time is refused as `timeout`. A stream the app
 * read or decoded first is its mistake: answered `raw_body_unavailable`, with what happened and then `fix`; one
 * whose client hung up before the route is cut short, not the app's doing.
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
    done({ method, headers, bodyProblem: bodyProblemOf('read', fix) });
    return;
  }
  // The client hung up before the route ran (while an async middleware in front of it waited): its body is cut
  // short, not read by the app, and no one reads the answer.
  if (req.destroyed) {
    done({ method, headers, bodyProblem: { kind: 'unreadable' } });
    return;
  }
  readBody(req, declaredLength(headers), limit, timeoutMs, (body) => {
    done(
      typeof body === 'string'
        ? { method, headers, bodyProblem: bodyProblemOf(body, fix) }
        : { method, headers, body },
    );
  });
}

/**
 * The request's `content-length` as a number, or undefined when absent or not plain digits.
 * @example
 * const declared = declaredLength(req.headers);
 */
export function declaredLength(headers: IncomingHttpHeaders): number | undefined {
  return lengthOf(headers['content-length']);
}

// raw-body's error types that are not a broken body: too large, or a stream the app already read or decoded.
const RAW_BODY_FAILURES: ReadonlyMap<string | undefined, BodyFailure> = new Map([
  ['entity.too.large', 'too_large'],
  ['stream.not.readable', 'read'],
  ['stream.encoding.set', 'decoded'],
]);

/**
 * Reads a body stream to its end with raw-body, up to `limit` bytes and within `timeoutMs`, and calls `done`
 * once: with the bytes, or with why not. A declared length over the limit, a stream already read and one that
 * decodes to text (its chunks would no longer be the bytes that were signed) are refused before a byte is read;
 * past the limit or the deadline it stops reading, and the answer closes the connection.
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
    else finish(RAW_BODY_FAILURES.get((error as { type?: string }).type) ?? 'unreadable');
  });
}
