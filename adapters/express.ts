// Express adapter: the unread stream's raw bytes (or express.raw()'s, if one ran); a parsed body is refused loudly.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../src/logger.js';
import type { HandleInput, Receiver } from '../src/receiver.js';
import { notAReceiver } from '../src/receiver-given.js';
import { answerNode } from './node-answer.js';
import { readNodeInput } from './node-io.js';

// Only one fix: with express.raw() in front, Express itself answers an oversized body (its HTML 413) and never a
// slow one (no 408), so the receiver's limits would no longer hold.
const EXPRESS_FIX =
  "the body was parsed before the webhook route (app.use(express.json()) runs first?). Mount the webhook route before any body parser: app.all('/webhooks/workforce', createExpressMiddleware(receiver)), then app.use(express.json())";

// Said after what happened to the stream (read, or its encoding set, by a middleware that ran first).
const STREAM_FIX =
  "Mount the webhook route before any middleware that reads the request: app.all('/webhooks/workforce', createExpressMiddleware(receiver)), then the rest";

// Express 4's parsers (body-parser 1) set `req.body = {}` on every request, the ones they skip (another Content-Type)
// included, and leave the stream unread; a parser that did read the body marks the request `_body`.
const isPlaceholder = (req: IncomingMessage, body: unknown): boolean => {
  if ((req as { _body?: unknown })._body === true || Object.getPrototypeOf(body) !== Object.prototype)
    return false;
  for (const _ in body as object) return false;
  return true;
};

const rawInFront = (maxBodyBytes: number): string =>
  `workforce-webhooks: express.raw() read the body before the webhook route, so Express, not the receiver, answers a body over express.raw's limit (its HTML 413 page; 100 kB by default) and a slow one (no 408 at bodyTimeoutMs). Fix: mount the webhook route before express.raw(): app.all('/webhooks/workforce', createExpressMiddleware(receiver)), or give it a limit of at least maxBodyBytes: express.raw({ type: 'application/json', limit: ${maxBodyBytes} })`;

/**
 * Express middleware (typed on `node:http`, so any Express version fits). Use it as the route's handler.
 * @example
 * app.all('/webhooks/workforce', createExpressMiddleware(receiver));
 */
export function createExpressMiddleware(
  receiver: Pick<Receiver<unknown>, 'handle' | 'maxBodyBytes' | 'bodyTimeoutMs'> & {
    readonly logger?: Logger;
  },
): (req: IncomingMessage & { body?: unknown }, res: ServerResponse) => Promise<void> {
  const wrong = notAReceiver(
    receiver,
    'handle',
    'createExpressMiddleware',
    "the route's handler",
    "app.all('/webhooks/workforce', createExpressMiddleware(receiver))",
  );
  if (wrong !== undefined) throw wrong;
  const handle = (input: HandleInput) => receiver.handle(input);
  const limits = { limit: receiver.maxBodyBytes, timeoutMs: receiver.bodyTimeoutMs };
  const { logger } = receiver;
  // Said once, at the first body express.raw() read: the bytes are right, but the receiver's limits are gone.
  let rawSaid = logger === undefined;
  return (req, res) =>
    new Promise<void>((resolve, reject) => {
      const { body, method, headers } = req;
      const answer = (input: HandleInput): void => answerNode(res, handle(input), resolve, reject, logger);
      if (body instanceof Uint8Array) {
        if (!rawSaid) {
          rawSaid = true;
          logger?.warn({ kind: 'express_raw' }, rawInFront(receiver.maxBodyBytes));
        }
        answer({ method, headers, body });
      } else if (body === undefined || body === null || isPlaceholder(req, body))
        readNodeInput(req, limits, STREAM_FIX, answer);
      else answer({ method, headers, bodyProblem: { kind: 'raw_body_unavailable', fix: EXPRESS_FIX } });
    });
}
