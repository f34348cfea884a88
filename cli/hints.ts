// What to look at first when an endpoint refuses a delivery `check` or `send` knows to be valid.

const HINTS: Readonly<Record<string, string>> = {
  signature_mismatch:
    "is --secret this endpoint's secret? It is the whsec_ secret shown once when the endpoint was added; after a rotation, pass the new one (the receiver can hold both while it rotates)",
  missing_signature:
    'the Svc-Signature header did not reach the receiver: does a proxy in front of it drop headers?',
  malformed_signature:
    'the Svc-Signature header was changed on the way: does a proxy in front of it rewrite headers?',
  timestamp_out_of_tolerance:
    "is the server's clock right? The signature's time must be within the tolerance (300 s) of the receiver's clock",
  raw_body_unavailable:
    "the body was parsed before the receiver saw it. Register the webhook route before any body parser: with Express, before app.use(express.json()); with the Next pages router, export const config = { api: { bodyParser: false } }; with Hono, no validator or body middleware on the route. The server's log names the exact fix",
  not_configured:
    'the receiver has no secret: set WORKFORCE_WEBHOOK_SECRET (or pass secret) where the server runs',
  handler_failed: "a handler threw on this delivery (inline mode): the server's log has the error",
  payload_too_large: "the receiver's body limit is lower than this delivery: raise maxBodyBytes",
  in_progress: 'the same event is still being handled elsewhere; the service retries it later',
  store_unavailable:
    "the receiver's dedupe store (Redis or Postgres) is unreachable or answered slower than storeTimeoutMs (2 s): is it running and reachable from where the server runs? The server's log has the error",
  queue_unavailable:
    "the receiver's queue did not take the event (its enqueue failed, or took longer than queueTimeoutMs, 2 s): with BullMQ, is its Redis running and reachable from where the server runs? With a queue of your own, see what its enqueue rejected with. The server's log has the error",
  queue_full:
    "the memory queue is full: handlers run slower than deliveries arrive; speed them up, or raise the queue's maxQueued or concurrency",
  shutting_down: 'the receiver is closing (receiver.close() was called): is the server restarting?',
  invalid_payload:
    'the body was changed on the way, or is not the event sent: does a proxy in front of the receiver rewrite or re-encode bodies?',
  body_timeout:
    'the body did not arrive whole in time: does a proxy in front of the receiver hold or trickle request bodies?',
};

// The package's examples sign with these when WORKFORCE_WEBHOOK_SECRET is unset (examples/express, hono, fastify share
// one; examples/postgres has its own): a newcomer trying `send` against one needs to know which.
const DEMO_SECRET = 'whsec_demo_bG9jYWwtdHJpYWxzLW9ubHktbm90LWEtcmVhbC1zZWNyZXQ';
const POSTGRES_DEMO_SECRET = 'whsec_demo_postgres_local_trials_only';

// Only for a receiver on this machine, where an example is what answers; both are published, so not secrets.
function demoSecretHint(url: string, secret: string): string {
  const host = URL.canParse(url) ? new URL(url).hostname : '';
  if (!/^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i.test(host)) return '';
  if (secret === DEMO_SECRET || secret === POSTGRES_DEMO_SECRET)
    return ". --secret is an example's demo secret, so this server was started with WORKFORCE_WEBHOOK_SECRET set: pass that one";
  return `. An example of this package started without WORKFORCE_WEBHOOK_SECRET checks its demo secret: send with WORKFORCE_WEBHOOK_SECRET=${DEMO_SECRET} (examples/postgres: ${POSTGRES_DEMO_SECRET}), or start it with yours`;
}

/**
 * The receiver's error code in an answer's `{"error": code}` body, or undefined for any other body.
 * @example
 * errorCode('{"error":"signature_mismatch"}') // 'signature_mismatch'
 */
export function errorCode(body: string): string | undefined {
  try {
    const code = (JSON.parse(body) as { error?: unknown } | null)?.error;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A hint for an answer, read from its `{"error": code}` body; undefined when there is nothing better to say.
 * `urlOption` is the option that gave the endpoint's URL (`--url`, `--deliver-to`); `sent`, where the delivery went
 * and the secret that signed it, lets a refused signature to this machine name the examples' demo secret.
 * @example
 * hintFor(400, '{"error":"signature_mismatch"}') // "is --secret this endpoint's secret? ..."
 */
export function hintFor(
  status: number,
  body: string,
  urlOption = '--url',
  sent?: { readonly url: string; readonly secret: string },
): string | undefined {
  const code = errorCode(body);
  if (code === 'signature_mismatch' && sent !== undefined)
    return `${HINTS[code]}${demoSecretHint(sent.url, sent.secret)}`;
  if (code !== undefined && Object.hasOwn(HINTS, code)) return HINTS[code];
  if (status === 404 || status === 405)
    return `is ${urlOption} the webhook route, with the receiver mounted for POST on it?`;
  // Gateway answers: an app answers neither of its own; a 503 may be the app's (busy), so it is not guessed at.
  if (status === 502 || status === 504)
    return "a proxy or platform in front of the receiver answered, not the receiver: is the app behind it running, and answering within the proxy's time limit? See the proxy's log";
  if (status === 401 || status === 403)
    return 'something in front of the receiver asks for credentials; the service sends none but the signature';
  return undefined;
}
