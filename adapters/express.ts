// Express adapter: the unread stream's raw bytes (or express.raw()'s, if one ran); a parsed body is refused loudly.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { HandleInput, Receiver } from '../src/receiver.js';
import { answerNode, readNodeInput } from './node-io.js';

// Only one fix: with express.raw() in front, Express itself answers an oversized body (its HTML 413) and never a
// slow one (no 408), so the receiver's limits would no longer hold.
const EXPRESS_FIX =
  "the body was parsed before the webhook route (app.use(express.json()) runs first?). Mount the webhook route before any body parser: app.all('/webhooks/workforce', createExpressMiddleware(receiver)), then app.use(express.json())";

/**
 * Express middleware (typed on `node:http`, so any Express version fits). Use it as the route's handler.
 * @example
 * app.all('/webhooks/workforce', createExpressMiddleware(receiver));
 */
export function createExpressMiddleware(
  receiver: Pick<Receiver<unknown>, 'handle' | 'maxBodyBytes' | 'bodyTimeoutMs'>,
): (req: IncomingMessage & { body?: unknown }, res: ServerResponse) => Promise<void> {
  const handle = (input: HandleInput) => receiver.handle(input);
  const limits = { limit: receiver.maxBodyBytes, timeoutMs: receiver.bodyTimeoutMs };
  return (req, res) =>
    new Promise<void>((resolve, reject) => {
      const { body, method, headers } = req;
      const answer = (input: HandleInput): void => answerNode(res, handle(input), resolve, reject);
      if (body instanceof Uint8Array) answer({ method, headers, body });
      else if (body !== undefined && body !== null)
        answer({ method, headers, bodyProblem: { kind: 'raw_body_unavailable', fix: EXPRESS_FIX } });
      else readNodeInput(req, limits, EXPRESS_FIX, answer);
    });
}
