// node:http adapter: read the raw bytes (bounded, never copied when they come in one chunk), call the core, write its answer.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HandleInput, Receiver } from '../src/receiver.js';
import type { WebhookResponse } from '../src/responses.js';

const NODE_FIX =
  'nothing may read the request stream before this handler; mount it before any body parser for this path';

/**
 * A `(req, res)` handler for `node:http` (and anything built on it).
 * @example
 * http.createServer(createNodeHandler(receiver)).listen(3000);
 */
export function createNodeHandler(
  receiver: Pick<Receiver<unknown>, 'handle' | 'maxBodyBytes'>,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const handle = (input: HandleInput) => receiver.handle(input);
  return (req, res) =>
    readNodeRequest(req, receiver.maxBodyBytes, NODE_FIX)
      .then(handle)
      .then((response) => writeResponse(res, response));
}

/**
 * Turns a Node request into the core's input: its raw bytes, or why they cannot be had. Never waits on a stream
 * that something else already consumed.
 * @example
 * await receiver.handle(await readNodeRequest(req, receiver.maxBodyBytes, 'mount before express.json()'));
 */
export function readNodeRequest(req: IncomingMessage, limit: number, fix: string): Promise<HandleInput> {
  const { method, headers } = req;
  if (method !== 'POST') return Promise.resolve({ method, headers });
  if (req.readableEnded)
    return Promise.resolve({ method, headers, bodyProblem: { kind: 'raw_body_unavailable', fix } });
  return new Promise((resolve) => {
    readBody(req, limit, (body) =>
      resolve(
        typeof body === 'string'
          ? { method, headers, bodyProblem: { kind: body } }
          : { method, headers, body },
      ),
    );
  });
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
