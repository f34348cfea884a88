// The two `#crypto` backends must agree byte for byte: node:crypto on Node, Web Crypto everywhere else.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as node from '../../../src/crypto/node.js';
import * as web from '../../../src/crypto/web.js';

describe('crypto backends', () => {
  it('produce the same digest and the same verdicts for any secret, timestamp and body', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0, max: 999_999_999_999 }).map(String),
        fc.uint8Array({ maxLength: 512 }),
        async (secret, timestamp, payload) => {
          const digest = await node.signHex(secret, timestamp, payload);
          expect(await web.signHex(secret, timestamp, payload)).toBe(digest);
          const wrong = digest.replace(/^./, (c) => (c === '0' ? '1' : '0'));
          for (const backend of [node, web]) {
            expect(await backend.verifyDigests([secret], timestamp, payload, [digest])).toBe(true);
            expect(await backend.verifyDigests([secret], timestamp, payload, [wrong])).toBe(false);
            expect(await backend.verifyDigests(['other', secret], timestamp, payload, [wrong, digest])).toBe(
              true,
            );
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it('match an independently computed vector', async () => {
    // printf '1700000000.{"id":"evt"}' | openssl dgst -sha256 -hmac whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
    const expected = 'b6b1a2c533c224a29c2e261118dedf75db0c6cfde64a4ea17e596c76ad248738';
    const body = new TextEncoder().encode('{"id":"evt"}');
    for (const backend of [node, web]) {
      expect(await backend.signHex('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', '1700000000', body)).toBe(
        expected,
      );
    }
  });
});
