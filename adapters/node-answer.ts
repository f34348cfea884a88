// Writing the core's answer on a node:http (or HTTP/2 compatibility) response: no Node module is imported, so the
// Next adapters that use it still bundle for the edge. Internal: not a subpath of the package.
import type { ServerResponse } from 'node:http';
import type { Http2ServerResponse } from 'node:http2';
import type { Logger } from '../src/logger.js';
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
  logger?: Logger,
): void {
  if (answer instanceof Promise) {
    answer.then((response) => answerNode(res, response, done, failed, logger), failed);
    return;
  }
  try {
    writeResponse(res, answer, logger);
  } catch (error) {
    failed(error);
    return;
  }
  done();
}

/**
 * Writes the core's answer on a node:http response or one of HTTP/2's compatibility API. When the request was not
 * read to its end (a refused oversized or late body), the connection is closed after the answer instead of reading
 * the rest; on HTTP/2, the request's stream. When the app already sent the headers, the response is ended (or cut,
 * where they said 2xx for a delivery the receiver refused) and `logger` is told the fix once.
 * @example
 * writeResponse(res, await receiver.handle(input), receiver.logger);
 */
export function writeResponse(
  given: ServerResponse | Http2ServerResponse,
  response: WebhookResponse,
  logger?: Logger,
): void {
  // Written through the members HTTP/2's compatibility response shares with HTTP/1's, and HTTP/2's own way below.
  const res = given as ServerResponse;
  if (res.headersSent) {
    // Left open, the response would hang until the sender gives up; one the app ended is its own answer.
    if (!res.writableEnded) endStarted(res, response.status, logger);
    return;
  }
  const { req } = res;
  if (!req.readableEnded) {
    if (req.httpVersionMajor === 2) {
      writeHttp2(given as Http2ServerResponse, response);
      return;
    }
    res.setHeader('connection', 'close');
  }
  res.writeHead(response.status, response.headers);
  res.end(response.body);
}

// Loggers told that the headers went out before the route: a mistake of the app's setup, said once.
const headersSentSaid = new WeakSet<Logger>();

const success = (status: number): boolean => status >= 200 && status < 300;

// A middleware before the route called res.writeHead(), res.flushHeaders() or res.write(): the sender already has
// that status. A 2xx sent for a delivery the receiver refused (a 503 while its store is down) would tell the sender
// to stop retrying an event nobody took, so the response is cut instead: an incomplete answer is a failed delivery,
// sent again (spec rule 2). Node closes the connection of an answer ended before its request's body was read.
function endStarted(res: ServerResponse, status: number, logger: Logger | undefined): void {
  const sent = res.statusCode;
  if (logger !== undefined && !headersSentSaid.has(logger)) {
    headersSentSaid.add(logger);
    logger.error(
      { kind: 'headers_sent', sentStatus: sent, status },
      `workforce-webhooks: the response's headers (status ${sent}) were sent before the webhook route answered ${status}, so the sender reads ${sent}. Fix: mount the webhook route before any middleware that calls res.writeHead(), res.flushHeaders() or res.write()`,
    );
  }
  if (success(sent) && !success(status)) res.destroy();
  else res.end();
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
