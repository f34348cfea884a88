// node:http adapter: read the raw bytes (bounded in size and time), call the core, write its answer.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { DEFAULT_BODY_TIMEOUT_MS } from '../src/body.js';
import type { Logger } from '../src/logger.js';
import type { HandleInput, Receiver } from '../src/receiver.js';
import { notAReceiver } from '../src/receiver-given.js';
import { answerNode, writeResponse } from './node-answer.js';
import { readNodeInput } from './node-io.js';

// Said after what happened to the stream (read, or its encoding set, before the handler).
const NODE_FIX =
  'call the handler with the request unread: mount it before any body parser or middleware that reads the stream for this path';

/**
 * A `(req, res)` handler: Node's HTTP/1 request and response, or those of its HTTP/2 compatibility API.
 * @example
 * const webhooks: NodeHandler = createNodeHandler(receiver);
 */
export interface NodeHandler {
  (req: Http2ServerRequest, res: Http2ServerResponse): Promise<void>;
  // Last, so that `http.createServer(handler)` infers its request and response types from this one.
  (req: IncomingMessage, res: ServerResponse): Promise<void>;
}

/**
 * A `(req, res)` handler for `node:http` (and anything built on it) and `node:http2`'s compatibility API.
 * @example
 * http.createServer(createNodeHandler(receiver)).listen(3000);
 * http2.createSecureServer({ key, cert, allowHTTP1: true }, createNodeHandler(receiver)).listen(3443);
 */
export function createNodeHandler(
  receiver: Pick<Receiver<unknown>, 'handle' | 'maxBodyBytes' | 'bodyTimeoutMs'> & {
    readonly logger?: Logger;
  },
): NodeHandler {
  const wrong = notAReceiver(
    receiver,
    'handle',
    'createNodeHandler',
    'the request handler',
    "const webhooks = createNodeHandler(receiver), then webhooks(req, res) for the webhook's path",
  );
  if (wrong !== undefined) throw wrong;
  const handle = (input: HandleInput) => receiver.handle(input);
  const limits = { limit: receiver.maxBodyBytes, timeoutMs: receiver.bodyTimeoutMs };
  const { logger } = receiver;
  // The HTTP/2 compatibility request and response are read and written through the members they share with
  // HTTP/1's; the answer writes HTTP/2's own way where the response is one.
  const serve = (req: IncomingMessage, res: ServerResponse): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      readNodeInput(req, limits, NODE_FIX, (input) =>
        answerNode(res, handle(input), resolve, reject, logger),
      );
    });
  return serve as NodeHandler;
}

/**
 * Turns a Node request (HTTP/1, or HTTP/2's compatibility API) into the core's input: its raw bytes, or why they
 * cannot be had. Never waits on a stream that something else already consumed, nor longer than `timeoutMs` (default
 * 10 000) for the whole body; `fix` is logged after what happened to a stream read or decoded before it.
 * @example
 * await receiver.handle(await readNodeRequest(req, receiver.maxBodyBytes, 'mount before express.json()'));
 */
export function readNodeRequest(
  req: IncomingMessage | Http2ServerRequest,
  limit: number,
  fix: string,
  timeoutMs: number = DEFAULT_BODY_TIMEOUT_MS,
): Promise<HandleInput> {
  // As in createNodeHandler: an HTTP/2 compatibility request is read through the members it shares with HTTP/1's.
  return new Promise((resolve) => readNodeInput(req as IncomingMessage, { limit, timeoutMs }, fix, resolve));
}

export { writeResponse };
