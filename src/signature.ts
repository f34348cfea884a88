// The `Svc-Signature` scheme (spec "Signature"): verify a delivery's signature, sign a payload.
import { signHex, verifyDigests } from '#crypto';
import { ConfigurationError, WebhookError, WebhookVerificationError } from './errors.js';
import { type Secret, secretList } from './secret-list.js';
import { type ParsedSignature, parseSignatureHeader, TIMESTAMP } from './signature-header.js';
import { StaleSignatureError } from './stale-signature-error.js';

export { type Secret, secretList } from './secret-list.js';
export { type ParsedSignature, parseSignatureHeader } from './signature-header.js';
export { StaleSignatureError } from './stale-signature-error.js';

const encoder = new TextEncoder();

// What a payload that is not bytes is, by its type alone: never a byte of it in a message.
const kindOf = (payload: unknown): string =>
  payload === null
    ? 'null'
    : payload instanceof ArrayBuffer
      ? 'an ArrayBuffer'
      : typeof payload === 'object'
        ? 'an object (a parsed body?)'
        : typeof payload;

// A body parser ran first (express.json() leaves an object, none leaves undefined) or the body was read as an
// ArrayBuffer: the crypto backends would fail on it with their own words (a TypeError on node:crypto, a RangeError on
// Web Crypto), none of which says what to do.
const notRaw = (payload: unknown): never => {
  throw new WebhookError(
    'raw_body_unavailable',
    `verifySignature needs the raw request body as received, a string or a Uint8Array (a Buffer), and got ${kindOf(payload)}: read it raw, before any JSON parser (express.raw({ type: 'application/json' }), await request.text()), and pass an ArrayBuffer as new Uint8Array(buffer)`,
  );
};

const notBytes = (payload: unknown): never => {
  throw new ConfigurationError(
    `signPayload signs the exact bytes to send, a string or a Uint8Array, and got ${kindOf(payload)}: pass JSON.stringify(event), and an ArrayBuffer as new Uint8Array(buffer)`,
  );
};

/** Options of `verifySignature`. */
export interface VerifyOptions {
  /** The raw request body exactly as received (a string is taken as its UTF-8 bytes). */
  readonly payload: Uint8Array | string;
  /** The `Svc-Signature` header value. */
  readonly header: string | null | undefined;
  readonly secret: Secret;
  /** Largest allowed difference between now and `t`, in either direction. Default 300. */
  readonly toleranceSeconds?: number;
  /** The clock, in milliseconds like `Date.now`. */
  readonly now?: () => number;
}

/**
 * Checks a delivery's signature: its header's shape, its HMAC in constant time, its time within the tolerance (a
 * stale request is refused as stale, matching or not). Resolves with the parsed header; rejects with
 * `WebhookVerificationError` (a `StaleSignatureError` for a stale one), or with a `raw_body_unavailable`
 * `WebhookError` when `payload` is not the body's bytes (a parsed body, an ArrayBuffer, nothing).
 * @example
 * await verifySignature({ payload: rawBody, header: req.headers['svc-signature'], secret: process.env.WORKFORCE_WEBHOOK_SECRET! });
 */
export async function verifySignature({
  payload,
  header,
  secret,
  toleranceSeconds = 300,
  now = Date.now,
}: VerifyOptions): Promise<ParsedSignature> {
  const bytes =
    typeof payload === 'string'
      ? encoder.encode(payload)
      : ArrayBuffer.isView(payload)
        ? payload
        : notRaw(payload);
  return checkSignature(bytes, header, secretList(secret), toleranceSeconds, now());
}

/**
 * `verifySignature` for callers that already hold validated options: it answers at once on node:crypto (a
 * promise only on Web Crypto) and throws `WebhookVerificationError` rather than rejecting, so the receiver's
 * hot path spends no promise on it.
 * @example
 * const parsed = checkSignature(body, header, ['whsec_abc'], 300, Date.now());
 */
export function checkSignature(
  payload: Uint8Array,
  header: string | null | undefined,
  secrets: readonly string[],
  toleranceSeconds: number,
  nowMs: number,
): ParsedSignature | Promise<ParsedSignature> {
  const parsed = parseSignatureHeader(header);
  const age = Math.floor(nowMs / 1000) - Number(parsed.timestamp);
  if (parsed.signatures.length === 0) {
    if (inTolerance(age, toleranceSeconds)) return mismatch();
    throw new StaleSignatureError(age, toleranceSeconds, false);
  }
  const matched = verifyDigests(secrets, parsed.timestamp, payload, parsed.signatures);
  if (typeof matched === 'boolean') return verdict(parsed, matched, age, toleranceSeconds);
  return matched.then((ok) => verdict(parsed, ok, age, toleranceSeconds));
}

// Written so that a NaN (a `now` returning a string or nothing, a NaN tolerance) is out of tolerance: `age > t`
// is false for NaN, which would let a signature of any age through, replays included.
const inTolerance = (age: number, toleranceSeconds: number): boolean =>
  age <= toleranceSeconds && age >= -toleranceSeconds;

// A stale request still gets its HMAC (the one a fresh forgery costs too), so the refusal can say whether the
// signature was right: only then is the clock worth a warning. Both answer `timestamp_out_of_tolerance` alike.
function verdict(
  parsed: ParsedSignature,
  matched: boolean,
  age: number,
  toleranceSeconds: number,
): ParsedSignature {
  if (!inTolerance(age, toleranceSeconds)) throw new StaleSignatureError(age, toleranceSeconds, matched);
  return matched ? parsed : mismatch();
}

function mismatch(): never {
  throw new WebhookVerificationError('signature_mismatch', 'no v1 signature matches the body and secret');
}

/** Options of `signPayload`. */
export interface SignOptions {
  readonly payload: Uint8Array | string;
  /** One secret, or several to emit one `v1` each (as a sender does during rotation). */
  readonly secret: Secret;
  /** Unix seconds; default now. */
  readonly timestamp?: number;
}

/**
 * Produces the `Svc-Signature` header value a sender would put on this payload.
 * @example
 * const header = await signPayload({ payload: JSON.stringify(event), secret: 'whsec_test' });
 */
export async function signPayload({
  payload,
  secret,
  timestamp = Math.floor(Date.now() / 1000),
}: SignOptions): Promise<string> {
  const t = String(timestamp);
  if (!TIMESTAMP.test(t)) throw new ConfigurationError('timestamp must be a whole number of unix seconds');
  const bytes =
    typeof payload === 'string'
      ? encoder.encode(payload)
      : ArrayBuffer.isView(payload)
        ? payload
        : notBytes(payload);
  const digests = await Promise.all(secretList(secret).map((s) => signHex(s, t, bytes)));
  return `t=${t},${digests.map((d) => `v1=${d}`).join(',')}`;
}
