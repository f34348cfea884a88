// HMAC-SHA256 on node:crypto: picked by the `node` condition of the package's `#crypto` import.
import { createHmac, timingSafeEqual } from 'node:crypto';

// A string key is re-encoded by every createHmac call (about a third of a 1 KB verify); the bytes are made once.
const keys = new Map<string, Buffer>();

function keyBytes(secret: string): Buffer {
  let key = keys.get(secret);
  if (key === undefined) {
    key = Buffer.from(secret, 'utf8');
    // A handful of secrets live for the life of the process (rotation keeps two); cap it anyway.
    if (keys.size >= 64) keys.clear();
    keys.set(secret, key);
  }
  return key;
}

/**
 * Lowercase hex HMAC-SHA256 of `<timestamp>.<payload>`, keyed with the whole secret string as UTF-8.
 * @example
 * await signHex('whsec_abc', '1700000000', new TextEncoder().encode('{}'));
 */
export async function signHex(secret: string, timestamp: string, payload: Uint8Array): Promise<string> {
  return createHmac('sha256', keyBytes(secret)).update(`${timestamp}.`).update(payload).digest('hex');
}

/**
 * True when the digest under any secret equals any 64-hex-character candidate, compared in constant time.
 * Answers synchronously (Web Crypto's backend answers with a promise): the caller skips an await per delivery.
 * @example
 * await verifyDigests(['whsec_abc'], '1700000000', body, [v1]);
 */
export function verifyDigests(
  secrets: readonly string[],
  timestamp: string,
  payload: Uint8Array,
  candidates: readonly string[],
): boolean | Promise<boolean> {
  const decoded = candidates.map((hex) => Buffer.from(hex, 'hex'));
  const prefix = `${timestamp}.`;
  let matched = false;
  for (const secret of secrets) {
    const digest = createHmac('sha256', keyBytes(secret)).update(prefix).update(payload).digest();
    // Every candidate is compared even after a match, so the time taken does not say which one matched.
    for (const candidate of decoded) if (timingSafeEqual(digest, candidate)) matched = true;
  }
  return matched;
}
