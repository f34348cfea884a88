// Fastify adapter: a plugin whose own scope reads every body as raw bytes, so the app's parsers never see it.
import type { Http2ServerResponse } from 'node:http2';
import type { Readable } from 'node:stream';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { BodyProblem, HandleInput, Receiver } from '../src/receiver.js';
import { notAReceiver } from '../src/receiver-given.js';
import type { WebhookResponse } from '../src/responses.js';
import { withoutConnection } from './node-answer.js';
import { type BodyFailure, bodyProblemOf } from './node-failure.js';
import { declaredLength, readBody } from './node-io.js';

/** Options of `createFastifyPlugin`, given to it or to `app.register(plugin, options)`. */
export interface FastifyPluginOptions {
  /** The webhook route, under the plugin's prefix. Default `/webhooks/workforce`. */
  readonly path?: string;
}

const FASTIFY_FIX =
  'something replaced request.body before the webhook route (a preValidation or preHandler hook?). Keep body hooks off the plugin registered by createFastifyPlugin';

// Said after what happened to the stream: an app-wide onRequest or preParsing hook read request.raw, or decoded it.
const STREAM_FIX =
  "Keep hooks that read request.raw or set its encoding (onRequest, preParsing) off the webhook route: return early in them for its URL, or register them inside a plugin of their own, beside createFastifyPlugin's";

/**
 * A Fastify plugin that registers the webhook route with a raw-bytes body parser scoped to itself.
 * @example
 * await app.register(createFastifyPlugin(receiver, { path: '/webhooks/workforce' }));
 */
export function createFastifyPlugin(
  receiver: Pick<Receiver<unknown>, 'handle' | 'maxBodyBytes' | 'bodyTimeoutMs'>,
  { path = '/webhooks/workforce' }: FastifyPluginOptions = {},
): FastifyPluginAsync<FastifyPluginOptions> {
  // Registered itself instead of its result, the factory is handed the Fastify instance, and a plain return would
  // register nothing (every delivery Fastify's 404). A rejected promise is what Fastify awaits from a plugin: start-up
  // fails with the line to write.
  const wrong = notAReceiver(
    receiver,
    'handle',
    'createFastifyPlugin',
    'the plugin',
    "app.register(createFastifyPlugin(receiver, { path: '/webhooks/workforce' }))",
  );
  if (wrong !== undefined) return Promise.reject(wrong) as never;
  const handle = (input: HandleInput) => receiver.handle(input);
  const send = (reply: FastifyReply, response: WebhookResponse): void => {
    reply.code(response.status).headers(response.headers).send(response.body);
  };
  // HTTP/2 has no `connection` header (Node drops it with a warning); Fastify sets one too when a parser refuses.
  const sendHttp2 = (reply: FastifyReply, response: WebhookResponse): void => {
    reply.removeHeader('connection');
    reply.code(response.status).headers(withoutConnection(response.headers)).send(response.body);
  };
  // Sent before the route handler returns when the core answers at once; Fastify then has nothing to await.
  const answerWith =
    (write: typeof send) =>
    (reply: FastifyReply, input: HandleInput): Promise<void> | undefined => {
      const response = handle(input);
      if (response instanceof Promise) return response.then((r) => write(reply, r));
      write(reply, response);
      return undefined;
    };
  const answer = answerWith(send);
  const answerHttp2 = answerWith(sendHttp2);
  // The core's answer to a body that could not be had, most often one not read to its end: on HTTP/1.1 the
  // connection is closed after it; on HTTP/2 the request's stream is, once the answer is sent, or it and its unread
  // body stay open and a graceful close waits on them (RFC 9113 section 8.1 lets a server reset a stream after a
  // complete response; close() resets it with NO_ERROR).
  // With no `bodyProblem`, a request answered unread (not POST: 405), its body not waited for.
  const refuse = (
    request: FastifyRequest,
    reply: FastifyReply,
    bodyProblem: BodyProblem | undefined,
  ): Promise<void> | undefined => {
    const { raw } = request;
    const input = { method: raw.method, headers: raw.headers, bodyProblem };
    if (raw.httpVersionMajor !== 2) {
      if (bodyProblem === undefined && !raw.complete) reply.header('connection', 'close');
      return answer(reply, input);
    }
    if (!raw.readableEnded) {
      const { stream } = reply.raw as unknown as Http2ServerResponse;
      stream.once('finish', () => stream.close());
    }
    return answerHttp2(reply, input);
  };
  // Reads the bytes as they came, where `parseAs: 'buffer'` would copy every body once more. It reads the stream
  // Fastify hands it (after any preParsing hook), so the bytes are those the app's own hooks let through.
  const { maxBodyBytes: limit, bodyTimeoutMs } = receiver;
  const parse = (
    request: FastifyRequest,
    payload: Readable,
    done: (error: Error | null, body?: Uint8Array) => void,
  ): void => {
    // Not POST: answered (405) unread, as by every other adapter, not after waiting up to bodyTimeoutMs for a body.
    if (request.raw.method !== 'POST') {
      done(null);
      return;
    }
    // An app hook drained the stream: raw-body would only see it as not readable.
    if (payload.readableEnded) {
      done(new BodyRefused('read'));
      return;
    }
    // A stream a preParsing hook made has a length of its own; the declared one is the request's.
    const declared = payload === request.raw ? declaredLength(request.headers) : undefined;
    readBody(payload, declared, limit, bodyTimeoutMs, (body) =>
      typeof body === 'string' ? done(new BodyRefused(body)) : done(null, body),
    );
  };
  // Fastify refuses a Content-Type it cannot parse ("", "json", a list) before any parser runs, where node:http,
  // Express and Hono read the body: read it here the same way, so the core decides (by the signature, not the type).
  const readUnparsable = (request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined => {
    const { raw } = request;
    const { method, headers } = raw;
    if (method !== 'POST') return refuse(request, reply, undefined);
    if (raw.readableEnded) return refuse(request, reply, bodyProblemOf('read', STREAM_FIX));
    // A preParsing hook took the socket's stream and the one it handed on is not reachable from here.
    if (raw.readableFlowing !== null) return refuse(request, reply, { kind: 'unreadable' });
    return new Promise((resolve) =>
      readBody(raw, declaredLength(headers), limit, bodyTimeoutMs, (body) => {
        if (typeof body !== 'string') return resolve(answer(reply, { method, headers, body }));
        // The rest of a refused body is not read: close rather than drain it, as Fastify does for its parsers.
        reply.header('connection', 'close');
        resolve(refuse(request, reply, bodyProblemOf(body, STREAM_FIX)));
      }),
    );
  };
  // The route, its parsers and its error handler, in the scope `register` gives them below.
  const mount = (fastify: FastifyInstance, route: string): void => {
    // The app's parsers (its JSON one, or a catch-all it added) are inherited: drop them here, keep the bytes.
    fastify.removeAllContentTypeParsers();
    // The service's own media type by name: Fastify caches that lookup, never the catch-all one.
    fastify.addContentTypeParser('application/json', parse);
    fastify.addContentTypeParser('*', parse);
    // A body refused by the parser (or by Fastify while reading it) ends here, with the connection closed; the core
    // picks the answer. So does a QUERY with no Content-Type, which Fastify refuses before reading it (the core
    // answers 405). Any other error (an app hook's 503, a rate limiter's 429) is the app's: the parent error
    // handler answers and logs it.
    fastify.setErrorHandler((error: Error & { code?: string }, request, reply) => {
      if (error instanceof BodyRefused) return refuse(request, reply, bodyProblemOf(error.kind, STREAM_FIX));
      const code = error.code;
      if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return readUnparsable(request, reply);
      if (code === 'FST_ERR_ROUTE_MISSING_CONTENT_TYPE')
        return refuse(request, reply, { kind: 'unreadable' });
      if (code === undefined || !code.startsWith('FST_ERR_CTP_')) throw error;
      return refuse(request, reply, {
        kind: code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 'too_large' : 'unreadable',
      });
    });
    fastify.all(route, (request: FastifyRequest, reply) => {
      const { method, headers } = request.raw;
      if (method !== 'POST') return refuse(request, reply, undefined);
      const { body } = request;
      return answer(
        reply,
        body instanceof Uint8Array
          ? { method, headers, body }
          : body === undefined || body === null
            ? // Fastify skips parsing when there is no body at all.
              { method, headers, body: new Uint8Array(0) }
            : { method, headers, bodyProblem: { kind: 'raw_body_unavailable', fix: FASTIFY_FIX } },
      );
    });
  };
  // The parsers and the error handler live in a scope of their own, registered from inside the plugin: one
  // wrapped in fastify-plugin (skip-override) would otherwise put them on the app, every JSON route of it then
  // handed raw bytes. `app.register(plugin, { path })` hands the path to the plugin, not to the factory: taken as
  // well, so the route is where it was asked for rather than silently at the default.
  return async (app, options) => {
    app.register(async (fastify) => mount(fastify, options.path ?? path));
  };
}

// Why the parser gave up on a body; the error handler turns it into the core's answer.
class BodyRefused extends Error {
  readonly kind: BodyFailure;

  constructor(kind: BodyFailure) {
    super(
      kind === 'too_large'
        ? 'the body is over maxBodyBytes'
        : kind === 'timeout'
          ? 'the body was not complete within bodyTimeoutMs'
          : kind === 'read' || kind === 'decoded'
            ? 'an app hook read or decoded the request stream first'
            : 'the body could not be read as sent',
    );
    this.kind = kind;
  }
}
