// What the node:http based adapters (node, Express, Next's Pages Router) share: reading the raw bytes of an
// IncomingMessage and writing the core's answer. Internal: not a subpath of the package.
import type { IncomingMessage, ServerResponse } from 'node:http';
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
  const length = headers['content-length'];
  const declared = length !== undefined && DIGITS.test(length) ? Number(length) : undefined;
  const early = answerWithoutReading(req, declared, limit, fix);
  if (early !== undefined) {
    done(early);
    return;
  }
  let first: Buffer | undefined;
  let chunks: Buffer[] | undefined;
  let received = 0;
  let finished = false;
  const finish = (body: Uint8Array | 'too_large' | 'unreadable'): void => {
    if (finished) return;
    finished = true;
    if (typeof body === 'string') {
      // Stop reading the rest; the answer closes the connection.
      req.removeListener('data', onData);
      req.pause();
      done({ method, headers, bodyProblem: { kind: body } });
    } else done({ method, headers, body });
  };
  const onData = (chunk: Buffer): void => {
    received += chunk.length;
    if (received > limit) finish('too_large');
    else if (first === undefined) first = chunk;
    else if (chunks === undefined) chunks = [first, chunk];
    else chunks.push(chunk);
  };
  const unreadable = (): void => finish('unreadable');
  req.on('data', onData);
  req.on('end', () => {
    if (declared !== undefined && received !== declared) unreadable();
    else finish(chunks !== undefined ? Buffer.concat(chunks, received) : (first ?? EMPTY));
  });
  req.on('error', unreadable);
  // An aborted request closes without 'end'.
  req.on('close', unreadable);
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
  if (declared !== undefined && declared > limit)
    return { method, headers, bodyProblem: { kind: 'too_large' } };
  // Decoded chunks would no longer be the bytes that were signed.
  if (req.readableEncoding !== null) return { method, headers, bodyProblem: { kind: 'unreadable' } };
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
