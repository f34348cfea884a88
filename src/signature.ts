// The `Svc-Signature` scheme (spec "Signature"): parse the header, verify, sign.
import { signHex, verifyDigests } from '#crypto';
import { ConfigurationError, WebhookVerificationError } from './errors.js';
import { isHexDigits } from './hex.js';

const encoder = new TextEncoder();
const TIMESTAMP = /^\d{1,12}$/;

/** A signing secret, or several during rotation (any one that matches passes). */
export type Secret = string | readonly string[];

/** The parts of an `Svc-Signature` header: `t` as written and every well-formed `v1`. */
export interface ParsedSignature {
  readonly timestamp: string;
  readonly signatures: readonly string[];
}

// A real header is about 80 bytes plus 68 per rotated signature; anything far past that is refused before any
// work on its items (spec "Signature"; header limits on Bun, Deno and Workers are the runtime's, not ours).
const MAX_HEADER_LENGTH = 4096;
const MAX_V1 = 16;
const COMMA = 44;
const EQUALS = 61;

/**
 * Splits `t=<unix seconds>,v1=<hex>[,v1=<hex>...]`; throws `WebhookVerificationError` when it cannot be used,
 * including a header over 4 KiB or with more than 16 `v1` items.
 * @example
 * parseSignatureHeader('t=1700000000,v1=5f2b...') // { timestamp: '1700000000', signatures: ['5f2b...'] }
 */
export function parseSignatureHeader(header: string | null | undefined): ParsedSignature {
  // The length first: no work on a header past it, not even a trim.
  if (header !== undefined && header !== null && header.length > MAX_HEADER_LENGTH)
    return malformed(`longer than ${MAX_HEADER_LENGTH} characters`);
  if (header === undefined || header === null || header.trim() === '') {
    throw new WebhookVerificationError('missing_signature', 'the Svc-Signature header is missing');
  }
  let timestamp: string | undefined;
  const signatures: string[] = [];
  let v1Count = 0;
  // One pass over the characters: each item's first `=` is noted on the way to its comma, so no character is
  // read twice (an `indexOf('=')` per item scanned to the end of the header: quadratic on many commas).
  let start = 0;
  let eq = -1;
  const { length } = header;
  for (let i = 0; i <= length; i++) {
    const c = i === length ? COMMA : header.charCodeAt(i);
    if (c === EQUALS) {
      if (eq === -1) eq = i;
      continue;
    }
    if (c !== COMMA) continue;
    if (eq !== -1) {
      const name = part(header, start, eq);
      if (name === 't') {
        const value = part(header, eq + 1, i);
        if (timestamp !== undefined || !TIMESTAMP.test(value))
          return malformed('t must appear once, as 1-12 digits');
        timestamp = value;
      } else if (name === 'v1') {
        if (++v1Count > MAX_V1) return malformed(`more than ${MAX_V1} v1 signatures`);
        const value = part(header, eq + 1, i);
        // A v1 of the wrong shape can never match; keep the others (rotation sends several).
        if (isHexDigits(value, 64)) signatures.push(value);
      }
    }
    start = i + 1;
    eq = -1;
  }
  if (timestamp === undefined) return malformed('t is missing');
  if (v1Count === 0) return malformed('no v1 signature');
  return { timestamp, signatures };
}

// `header.slice(from, to).trim()`, skipping the trim when neither end can be whitespace (printable ASCII).
function part(header: string, from: number, to: number): string {
  if (from === to) return '';
  const first = header.charCodeAt(from);
  const last = header.charCodeAt(to - 1);
  const plain = first > 32 && first < 127 && last > 32 && last < 127;
  return plain ? header.slice(from, to) : header.slice(from, to).trim();
}

function malformed(reason: string): never {
  throw new WebhookVerificationError(
    'malformed_signature',
    `the Svc-Signature header is malformed: ${reason}`,
  );
}

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
 * `WebhookVerificationError` (a `StaleSignatureError` for a stale one).
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
  const bytes = typeof payload === 'string' ? encoder.encode(payload) : payload;
  return checkSignature(bytes, header, secretList(secret), toleranceSeconds, now());
}

/**
 * The `timestamp_out_of_tolerance` refusal, with whether the signature matched: a stale request signed with the
 * secret points at a clock (or a delay on the way), a stale forgery at nothing but the sender.
 * @example
 * if (error instanceof StaleSignatureError && error.signed) console.log(`signed ${error.ageSeconds} s ago`);
 */
export class StaleSignatureError extends WebhookVerificationError {
  /** Seconds from `t` to now: positive when `t` is in the past, `NaN` when the clock gave no number. */
  readonly ageSeconds: number;
  /** Whether a `v1` matches under a secret: only the time is wrong. The answer does not depend on it. */
  readonly signed: boolean;

  constructor(ageSeconds: number, toleranceSeconds: number, signed: boolean) {
    super(
      'timestamp_out_of_tolerance',
      Number.isFinite(ageSeconds)
        ? `the signature timestamp is ${Math.abs(ageSeconds)} s ${ageSeconds > 0 ? 'old' : 'in the future'} (tolerance ${toleranceSeconds} s)`
        : 'the clock (`now`) gave no number of milliseconds, so no signature time can be judged',
    );
    this.name = 'StaleSignatureError';
    this.ageSeconds = ageSeconds;
    this.signed = signed;
  }
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
  const bytes = typeof payload === 'string' ? encoder.encode(payload) : payload;
  const digests = await Promise.all(secretList(secret).map((s) => signHex(s, t, bytes)));
  return `t=${t},${digests.map((d) => `v1=${d}`).join(',')}`;
}

// The prefix and nothing of a secret after it (`whsec_`, the README's `whsec_...`, the CLI's redacted `whsec_***`,
// whitespace around): a placeholder or a copy of a redacted line. Like whitespace only, a key anyone could sign with.
const PLACEHOLDER = /^\s*whsec_(?:[.*]*|\u2026)\s*$/;

/**
 * Normalises the `secret` option to a non-empty list of non-empty strings, refusing one of only whitespace or a bare
 * `whsec_` placeholder.
 * @example
 * secretList('whsec_a') // ['whsec_a']
 */
export function secretList(secret: Secret): readonly string[] {
  const list = typeof secret === 'string' ? [secret] : secret;
  if (!Array.isArray(list) || list.length === 0 || list.some((s) => typeof s !== 'string' || s === '')) {
    throw new ConfigurationError('secret must be a non-empty string or a non-empty array of them');
  }
  // Refused, not warned: verifying with a key anyone can guess would accept anyone's forgery.
  for (const s of list) {
    if (s.trim() === '')
      throw new ConfigurationError(
        "the secret is only whitespace (a variable or file holding a space or a newline), a key anyone could sign with, so it is not used. Pass the endpoint's whole `whsec_` secret, as shown when the endpoint was created.",
      );
    if (PLACEHOLDER.test(s))
      throw new ConfigurationError(
        "the secret is whsec_ with nothing after it (or only dots or asterisks): the prefix alone, a placeholder or a redacted copy, and a key anyone could sign with, so it is not used. Pass the endpoint's whole secret, as shown when the endpoint was created.",
      );
  }
  return list;
}
