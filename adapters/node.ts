// node:http adapter: read the raw bytes with raw-body (bounded), call the core, write its answer.
import type { IncomingMessage, ServerResponse } from 'node:http';
import getRawBody from 'raw-body';
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
  return async (req, res) => {
    writeResponse(res, await receiver.handle(await readNodeRequest(req, receiver.maxBodyBytes, NODE_FIX)));
  };
}

/**
 * Turns a Node request into the core's input: its raw bytes, or why they cannot be had. Never waits on a stream
 * that something else already consumed.
 * @example
 * await receiver.handle(await readNodeRequest(req, receiver.maxBodyBytes, 'mount before express.json()'));
 */
export async function readNodeRequest(
  req: IncomingMessage,
  limit: number,
  fix: string,
): Promise<HandleInput> {
  const { method, headers } = req;
  if (method !== 'POST') return { method, headers };
  if (req.readableEnded) return { method, headers, bodyProblem: { kind: 'raw_body_unavailable', fix } };
  try {
    const body = await getRawBody(req, { limit, length: headers['content-length'] });
    return { method, headers, body };
  } catch (error) {
    const type = (error as { type?: string }).type;
    return {
      method,
      headers,
      bodyProblem: { kind: type === 'entity.too.large' ? 'too_large' : 'unreadable' },
    };
  }
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
