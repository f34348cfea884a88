// Writing the core's answer on a node:http (or HTTP/2 compatibility) response: no Node module is imported, so the
// Next adapters that use it still bundle for the edge. Internal: not a subpath of the package.
import type { ServerResponse } from 'node:http';
import type { Http2ServerResponse } from 'node:http2';
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
 * Writes the core's answer. When the request was not read to its end (a refused oversized or late body), the
 * connection is closed after the answer instead of reading the rest; on Node's HTTP/2 compatibility server, the
 * request's stream.
 * @example
 * writeResponse(res, await receiver.handle(input));
 */
export function writeResponse(res: ServerResponse, response: WebhookResponse): void {
  if (res.headersSent) return;
  const { req } = res;
  if (!req.readableEnded) {
    if (req.httpVersionMajor === 2) {
      writeHttp2(res as unknown as Http2ServerResponse, response);
      return;
    }
    res.setHeader('connection', 'close');
  }
  res.writeHead(response.status, response.headers);
  res.end(response.body);
}

// HTTP/2 has no `connection` header (Node drops it with a warning): the stream is closed once the answer is sent,
// or it and its unread body stay open and a graceful close waits on them (RFC 9113 section 8.1 lets a server reset
// a stream after a complete response; close() waits for the answer to be written, then resets with NO_ERROR).
function writeHttp2(res: Http2ServerResponse, { status, headers, body }: WebhookResponse): void {
  res.writeHead(status, withoutConnection(headers));
  res.end(body);
  res.stream.close();
}

/**
 * An answer's headers for HTTP/2, which has no `connection` header (Node drops one with a warning).
 * @example
 * reply.headers(withoutConnection(response.headers));
 */
export function withoutConnection(headers: Readonly<Record<string, string>>): Record<string, string> {
  const { connection: _, ...rest } = headers;
  return rest;
}
