// The `Svc-Signature` header (spec "Signature"): its shape, parsed in one pass, and its limits.
import { WebhookVerificationError } from './errors.js';
import { isHexDigits } from './hex.js';

/**
 * A header's `t` as the spec writes it: 1 to 12 digits of unix seconds.
 * @example
 * TIMESTAMP.test('1700000000') // true
 */
export const TIMESTAMP: RegExp = /^\d{1,12}$/;

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
