// HMAC-SHA256 on Web Crypto, for runtimes without node:crypto (Workers, Deno, browsers).
const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();
const HEX = '0123456789abcdef';

function importKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (key === undefined) {
    key = crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, [
      'sign',
    ]);
    // A handful of secrets live for the life of the process (rotation keeps two); cap it anyway.
    if (keys.size >= 64) keys.clear();
    keys.set(secret, key);
  }
  return key;
}

function signedBytes(timestamp: string, payload: Uint8Array): Uint8Array<ArrayBuffer> {
  const prefix = encoder.encode(`${timestamp}.`);
  const data = new Uint8Array(prefix.length + payload.length);
  data.set(prefix, 0);
  data.set(payload, prefix.length);
  return data;
}

function fromHex(hex: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/**
 * Lowercase hex HMAC-SHA256 of `<timestamp>.<payload>`, keyed with the whole secret string as UTF-8.
 * @example
 * await signHex('whsec_abc', '1700000000', new TextEncoder().encode('{}'));
 */
export async function signHex(secret: string, timestamp: string, payload: Uint8Array): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.sign('HMAC', await importKey(secret), signedBytes(timestamp, payload)),
  );
  let hex = '';
  for (const byte of digest) hex += HEX[byte >> 4]! + HEX[byte & 15]!;
  return hex;
}

/**
 * True when the digest under any secret equals any 64-hex-character candidate: one HMAC per secret
 * (`subtle.sign`), then a constant-time comparison with each candidate, as the node:crypto backend does.
 * @example
 * await verifyDigests(['whsec_abc'], '1700000000', body, [v1]);
 */
export async function verifyDigests(
  secrets: readonly string[],
  timestamp: string,
  payload: Uint8Array,
  candidates: readonly string[],
): Promise<boolean> {
  const data = signedBytes(timestamp, payload);
  const decoded = candidates.map(fromHex);
  let matched = false;
  for (const secret of secrets) {
    // `subtle.verify` per candidate would run the HMAC over the whole body once per `v1` sent.
    const digest = new Uint8Array(await crypto.subtle.sign('HMAC', await importKey(secret), data));
    // Every candidate is compared even after a match, so the time taken does not say which one matched.
    for (const candidate of decoded) if (equalInConstantTime(digest, candidate)) matched = true;
  }
  return matched;
}

// Every byte is compared whatever the first difference: the time does not say how much of a guess was right.
function equalInConstantTime(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}
