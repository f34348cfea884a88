// The floor: the least a correct hand-written receiver does (same header parsing, one HMAC, timingSafeEqual).
import { createHmac, timingSafeEqual } from 'node:crypto';

const TIMESTAMP = /^\d{1,12}$/;
const DIGEST = /^[0-9a-fA-F]{64}$/;

/**
 * True when `header` carries a `v1` HMAC-SHA256 of `t.body` under `secret` and `t` is within 300 s.
 * @example
 * if (!floorVerify(body, req.headers['svc-signature'], secret)) res.writeHead(400).end();
 */
export function floorVerify(body: Uint8Array, header: string | undefined, secret: string): boolean {
  if (header === undefined) return false;
  let t: string | undefined;
  const candidates: string[] = [];
  for (const item of header.split(',')) {
    const eq = item.indexOf('=');
    if (eq === -1) continue;
    const name = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (name === 't' && TIMESTAMP.test(value)) t = value;
    else if (name === 'v1' && DIGEST.test(value)) candidates.push(value);
  }
  if (t === undefined || candidates.length === 0) return false;
  if (Math.abs(Math.floor(Date.now() / 1000) - Number(t)) > 300) return false;
  const digest = createHmac('sha256', secret).update(`${t}.`).update(body).digest();
  let matched = false;
  for (const candidate of candidates)
    if (timingSafeEqual(digest, Buffer.from(candidate, 'hex'))) matched = true;
  return matched;
}

/**
 * The floor plus what every receiver must do next: decode and `JSON.parse` the body (undefined when unverified).
 * @example
 * const event = floorVerifyAndParse(body, header, secret);
 */
export function floorVerifyAndParse(body: Buffer, header: string | undefined, secret: string): unknown {
  return floorVerify(body, header, secret) ? JSON.parse(body.toString('utf8')) : undefined;
}
