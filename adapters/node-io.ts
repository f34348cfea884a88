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

/**
 * `readNodeRequest` with a callback, called at once when there is nothing to read.
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
  if (method !== 'POST') done({ method, headers });
  else if (req.readableEnded) done({ method, headers, bodyProblem: { kind: 'raw_body_unavailable', fix } });
  else {
    readBody(req, limit, (body) =>
      done(
        typeof body === 'string'
          ? { method, headers, bodyProblem: { kind: body } }
          : { method, headers, body },
      ),
    );
  }
}

const DIGITS = /^\d{1,15}$/;

/**
 * Reads a request's bytes as sent, up to `limit`. A declared length over the limit is refused before reading;
 * a body that grows past it is cut off. One chunk (the usual webhook) is handed over as is, never copied.
 * Four listeners per request, against raw-body's five added and removed plus a copy of every body.
 */
function readBody(
  req: IncomingMessage,
  limit: number,
  done: (body: Uint8Array | 'too_large' | 'unreadable') => void,
): void {
  const length = req.headers['content-length'];
  const declared = length !== undefined && DIGITS.test(length) ? Number(length) : undefined;
  if (declared !== undefined && declared > limit) {
    done('too_large');
    return;
  }
  // Decoded chunks would no longer be the bytes that were signed.
  if (req.readableEncoding !== null) {
    done('unreadable');
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
    }
    done(body);
  };
  const onData = (chunk: Buffer): void => {
    received += chunk.length;
    if (received > limit) finish('too_large');
    else if (first === undefined) first = chunk;
    else if (chunks === undefined) chunks = [first, chunk];
    else chunks.push(chunk);
  };
  req.on('data', onData);
  req.on('end', () => {
    if (declared !== undefined && received !== declared) finish('unreadable');
    else finish(chunks !== undefined ? Buffer.concat(chunks, received) : (first ?? EMPTY));
  });
  req.on('error', () => finish('unreadable'));
  // An aborted request closes without 'end'.
  req.on('close', () => finish('unreadable'));
}

const EMPTY = new Uint8Array(0);

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
