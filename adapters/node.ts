// node:http adapter: read the raw bytes (bounded in size and time), call the core, write its answer.
import type { IncomingMessage, ServerResponse } from 'node:http';
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
 * A `(req, res)` handler for `node:http` (and anything built on it).
 * @example
 * http.createServer(createNodeHandler(receiver)).listen(3000);
 */
export function createNodeHandler(
  receiver: Pick<Receiver<unknown>, 'handle' | 'maxBodyBytes' | 'bodyTimeoutMs'> & {
    readonly logger?: Logger;
  },
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
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
  return (req, res) =>
    new Promise<void>((resolve, reject) => {
      readNodeInput(req, limits, NODE_FIX, (input) =>
        answerNode(res, handle(input), resolve, reject, logger),
      );
    });
}

/**
 * Turns a Node request into the core's input: its raw bytes, or why they cannot be had. Never waits on a stream
 * that something else already consumed, nor longer than `timeoutMs` (default 10 000) for the whole body; `fix`
 * is logged after what happened to a stream read or decoded before it.
 * @example
 * await receiver.handle(await readNodeRequest(req, receiver.maxBodyBytes, 'mount before express.json()'));
 */
export function readNodeRequest(
  req: IncomingMessage,
  limit: number,
  fix: string,
  timeoutMs: number = DEFAULT_BODY_TIMEOUT_MS,
): Promise<HandleInput> {
  return new Promise((resolve) => readNodeInput(req, { limit, timeoutMs }, fix, resolve));
}

export { writeResponse };
