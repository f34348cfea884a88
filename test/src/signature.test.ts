// Signature parse, verify and sign, on whichever backend `#crypto` resolves to (the node and web projects both run this).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  parseSignatureHeader,
  signPayload,
  verifySignature,
  WebhookVerificationError,
} from 'workforce-webhooks';
import { nearMiss } from '../support/near-miss.js';

// Known answers computed independently: printf '<t>.<body>' | openssl dgst -sha256 -hmac '<secret>'.
const vectors = [
  {
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    timestamp: 1700000000,
    payload: '{"id":"evt"}',
    v1: 'b6b1a2c533c224a29c2e261118dedf75db0c6cfde64a4ea17e596c76ad248738',
  },
  {
    secret: 'whsec_test',
    timestamp: 1,
    payload: '',
    v1: 'eb99cf7166ccb885ed83f41eccdd0c6f555a89a301d4ab8475e40f58c3b19443',
  },
  {
    secret: 'whsec_ünïcode🔑',
    timestamp: 1732200000,
    payload: '{"type":"leave.approved","data":{"name":"Zoë"}}',
    v1: 'ddcde2c1ca691e78d09fcec8749ebf134299d00887381aa354218913e93578e4',
  },
  {
    secret: 'whsec_bin',
    timestamp: 1700000000,
    // Not valid UTF-8: the bytes are signed as they are, never decoded and re-encoded.
    payload: new Uint8Array([0xff, 0xfe, 0x00, 0x7b]),
    v1: '33053bf6217de88f69f440c4e8d86efb5d57f33e2e9dadbbf96cce83f5b48050',
  },
  {
    secret: 'whsec_test',
    timestamp: 999999999999,
    payload: '',
    v1: '17112341a98d8c96742c91857606823d9dd4d07ece0f65bb31b6371e5bc1887a',
  },
];

const at = (seconds: number) => () => seconds * 1000;

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'ok';
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.code;
    throw error;
  }
}

describe('signPayload', () => {
  it.each(vectors)(
    'matches openssl for $secret at t=$timestamp',
    async ({ secret, timestamp, payload, v1 }) => {
      expect(await signPayload({ payload, secret, timestamp })).toBe(`t=${timestamp},v1=${v1}`);
    },
  );

  it('emits one v1 per secret, as a sender does during rotation', async () => {
    const header = await signPayload({ payload: '{}', secret: ['whsec_old', 'whsec_new'], timestamp: 5 });
    expect(parseSignatureHeader(header).signatures).toHaveLength(2);
  });

  it('refuses a timestamp that is not whole unix seconds', async () => {
    await expect(signPayload({ payload: '', secret: 'whsec_x', timestamp: 1.5 })).rejects.toThrow(
      /unix seconds/,
    );
  });
});

describe('verifySignature', () => {
  it.each(vectors)('accepts the known answer for $secret', async ({ secret, timestamp, payload, v1 }) => {
    const parsed = await verifySignature({
      payload,
      header: `t=${timestamp},v1=${v1}`,
      secret,
      now: at(timestamp),
    });
    expect(parsed.timestamp).toBe(String(timestamp));
  });

  it('takes the secret as the whole string, whsec_ prefix included', async () => {
    const { timestamp, payload, v1 } = vectors[0]!;
    const header = `t=${timestamp},v1=${v1}`;
    const stripped = 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    expect(await codeOf(verifySignature({ payload, header, secret: stripped, now: at(timestamp) }))).toBe(
      'signature_mismatch',
    );
  });

  it('accepts any of several secrets and any of several v1', async () => {
    const { secret, timestamp, payload, v1 } = vectors[0]!;
    const header = `t=${timestamp}, v1=${'0'.repeat(64)} , v0=abc, v1=${v1}`;
    await verifySignature({ payload, header, secret: ['whsec_rotated_out', secret], now: at(timestamp) });
  });

  it.each([
    [undefined, 'missing_signature'],
    ['', 'missing_signature'],
    ['   ', 'missing_signature'],
    ['v1=abc', 'malformed_signature'],
    ['t=1700000000', 'malformed_signature'],
    ['t=,v1=ab', 'malformed_signature'],
    ['t=17e8,v1=ab', 'malformed_signature'],
    ['t=-1,v1=ab', 'malformed_signature'],
    ['t=1234567890123,v1=ab', 'malformed_signature'],
    ['t=1700000000,t=1700000000,v1=ab', 'malformed_signature'],
    ['garbage', 'malformed_signature'],
  ])('refuses header %j with %s', async (header, code) => {
    expect(
      await codeOf(verifySignature({ payload: '{}', header, secret: 'whsec_x', now: at(1700000000) })),
    ).toBe(code);
  });

  it('never matches a v1 that is not 64 hex characters', async () => {
    const { secret, timestamp, payload, v1 } = vectors[0]!;
    for (const bad of [v1.slice(0, 63), `${v1}0`, `${v1.slice(0, 63)}g`]) {
      const header = `t=${timestamp},v1=${bad}`;
      expect(await codeOf(verifySignature({ payload, header, secret, now: at(timestamp) }))).toBe(
        'signature_mismatch',
      );
    }
  });

  it('passes at exactly ±300 s and fails at ±301 s, in both directions', async () => {
    const { secret, timestamp, payload, v1 } = vectors[0]!;
    const header = `t=${timestamp},v1=${v1}`;
    for (const [offset, code] of [
      [300, 'ok'],
      [-300, 'ok'],
      [301, 'timestamp_out_of_tolerance'],
      [-301, 'timestamp_out_of_tolerance'],
    ] as const) {
      expect(await codeOf(verifySignature({ payload, header, secret, now: at(timestamp + offset) }))).toBe(
        code,
      );
    }
  });

  it('checks the tolerance before the HMAC, so a stale forgery says stale', async () => {
    const header = `t=1000,v1=${'a'.repeat(64)}`;
    expect(await codeOf(verifySignature({ payload: '{}', header, secret: 'whsec_x', now: at(2000) }))).toBe(
      'timestamp_out_of_tolerance',
    );
  });

  it('honours a custom tolerance', async () => {
    const { secret, timestamp, payload, v1 } = vectors[0]!;
    const header = `t=${timestamp},v1=${v1}`;
    const verify = (offset: number) =>
      codeOf(verifySignature({ payload, header, secret, toleranceSeconds: 10, now: at(timestamp + offset) }));
    expect(await verify(10)).toBe('ok');
    expect(await verify(11)).toBe('timestamp_out_of_tolerance');
  });
});

describe('properties', () => {
  const now = 1_750_000_000;
  const secret = 'whsec_property';

  it('turns any header string into a WebhookVerificationError, never anything else', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string(),
          fc.string({ unit: fc.constantFrom('t', 'v', '1', '=', ',', ' ', '0', 'a', 'f', '9', '-') }),
          fc.tuple(fc.string(), fc.string()).map(([a, b]) => `t=${now},v1=${a}${b}`),
        ),
        async (header) => {
          const code = await codeOf(verifySignature({ payload: '{}', header, secret, now: at(now) }));
          expect([
            'missing_signature',
            'malformed_signature',
            'timestamp_out_of_tolerance',
            'signature_mismatch',
          ]).toContain(code);
        },
      ),
      { numRuns: 10_000 },
    );
  });

  it('fails on any single-byte change to the body, t or v1', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 1, maxLength: 256 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        fc.constantFrom('body', 't', 'v1'),
        async (body, position, delta, target) => {
          const header = await signPayload({ payload: body, secret, timestamp: now });
          let payload = body;
          let changed = header;
          if (target === 'body') {
            payload = body.slice();
            const i = position % payload.length;
            payload[i] = (payload[i]! + delta) % 256;
          } else {
            const { timestamp, signatures } = parseSignatureHeader(header);
            const text = target === 't' ? timestamp : signatures[0]!;
            const i = position % text.length;
            const alphabet = target === 't' ? '0123456789' : '0123456789abcdef';
            const replacement =
              alphabet[(alphabet.indexOf(text[i]!) + 1 + (delta % (alphabet.length - 1))) % alphabet.length]!;
            const edited = text.slice(0, i) + replacement + text.slice(i + 1);
            changed = target === 't' ? `t=${edited},v1=${signatures[0]}` : `t=${timestamp},v1=${edited}`;
          }
          // A changed t may also leave the tolerance window; either way it must not verify.
          const code = await codeOf(
            verifySignature({ payload, header: changed, secret, toleranceSeconds: 10 ** 12, now: at(now) }),
          );
          expect(code).toBe('signature_mismatch');
        },
      ),
      { numRuns: 10_000 },
    );
  });

  it('parses any header as the plain split-and-trim reading of the format does', () => {
    // The reading the spec describes, written the obvious way; the package parses in one pass instead.
    const reference = (header: string): { timestamp?: string; signatures: string[]; error?: string } => {
      if (header.trim() === '') return { signatures: [], error: 'missing_signature' };
      let timestamp: string | undefined;
      const signatures: string[] = [];
      let sawV1 = false;
      for (const item of header.split(',')) {
        const eq = item.indexOf('=');
        if (eq === -1) continue;
        const name = item.slice(0, eq).trim();
        const value = item.slice(eq + 1).trim();
        if (name === 't') {
          if (timestamp !== undefined || !/^\d{1,12}$/.test(value))
            return { signatures: [], error: 'malformed_signature' };
          timestamp = value;
        } else if (name === 'v1') {
          sawV1 = true;
          if (/^[0-9a-fA-F]{64}$/.test(value)) signatures.push(value);
        }
      }
      if (timestamp === undefined || !sawV1) return { signatures: [], error: 'malformed_signature' };
      return { timestamp, signatures };
    };
    const parsed = (header: string): { timestamp?: string; signatures: string[]; error?: string } => {
      try {
        const { timestamp, signatures } = parseSignatureHeader(header);
        return { timestamp, signatures: [...signatures] };
      } catch (error) {
        return { signatures: [], error: (error as WebhookVerificationError).code };
      }
    };
    const digest = 'a'.repeat(64);
    const piece = fc.oneof(
      fc.constantFrom('t', 'v1', 'v0', '=', ',', ' ', '\t', '\u00a0', '\ufeff', '1700000000', digest, 'x'),
      fc.string({ maxLength: 4 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
        const header = pieces.join('');
        expect(parsed(header)).toEqual(reference(header));
      }),
      { numRuns: 10_000 },
    );
    for (const header of [` t=1700000000 , v1=${digest} `, `t=1700000000,v1=${digest},`, `,,t=1,v1=`]) {
      expect(parsed(header)).toEqual(reference(header));
    }
  });

  it('keeps a v1 exactly when it is 64 hex digits of either case', () => {
    // Digest-like text with one character changed, dropped or added, any case, anywhere.
    const DIGEST = /^[0-9a-fA-F]{64}$/;
    const digestLike = nearMiss(fc.stringMatching(/^[0-9a-f]{64}$/), [
      '',
      'g',
      'G',
      'F',
      '0',
      ' ',
      '-',
      '\u00e9',
      '\u0660',
      '\uff10',
      'ff',
    ]);
    fc.assert(
      // No comma: a comma ends the item, and what follows it is another item (a second `t=` is refused outright).
      fc.property(
        fc.oneof(
          digestLike,
          fc.string({ maxLength: 66 }).filter((text) => !text.includes(',')),
        ),
        (candidate) => {
          const { signatures } = parseSignatureHeader(`t=1700000000,v1=${candidate}`);
          expect(signatures.length === 1 && signatures[0] === candidate.trim()).toBe(
            DIGEST.test(candidate.trim()),
          );
        },
      ),
      { numRuns: 20_000 },
    );
  });
});

describe('hostile headers', () => {
  // Counts the characters the parser reads through the header's own string methods: a `String` whose methods
  // add what each call can touch (an `indexOf` the distance it scans, a `charCodeAt` one, a `slice` its length).
  // Work, not time: the machine is shared, and growth is what the property is about.
  class CountingString extends String {
    reads = 0;
    override charCodeAt(index: number): number {
      this.reads += 1;
      return super.charCodeAt(index);
    }
    override charAt(index: number): string {
      this.reads += 1;
      return super.charAt(index);
    }
    override indexOf(search: string, from = 0): number {
      const found = super.indexOf(search, from);
      this.reads += (found === -1 ? this.length : found + search.length) - Math.max(0, from);
      return found;
    }
    override slice(from?: number, to?: number): string {
      const sliced = super.slice(from, to);
      this.reads += sliced.length;
      return sliced;
    }
    override trim(): string {
      this.reads += this.length;
      return super.trim();
    }
    override split(): string[] {
      throw new Error('counted parse reads characters one by one or by indexOf/slice');
    }
  }
  const readsOf = (header: string): number => {
    const counted = new CountingString(header);
    try {
      parseSignatureHeader(counted as unknown as string);
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
    }
    return counted.reads;
  };
  const digest = 'a'.repeat(64);
  // Shapes that made the old parser rescan the header: many items, one `=` at the very end.
  const shapes = [
    (n: number) => `${','.repeat(n - 1)}=`,
    (n: number) => `t=1700000000${','.repeat(Math.max(0, n - 13))}=`,
    (n: number) => `${'x,'.repeat(n >> 1)}v1=${digest}`.slice(-n),
    (n: number) => `t=1700000000,${`v1=${digest},`.repeat(16)}${' '.repeat(n)}`.slice(0, n),
    (n: number) => '=,'.repeat(n >> 1),
  ];

  it('reads each character of a header a bounded number of times, whatever its shape and size', () => {
    fc.assert(
      fc.property(fc.integer({ min: 16, max: 4096 }), fc.nat(shapes.length - 1), (size, shape) => {
        const header = shapes[shape]!(size);
        expect(header.length).toBeLessThanOrEqual(4096);
        // Linear: a few reads per character, never a number that grows with the header's length.
        expect(readsOf(header)).toBeLessThanOrEqual(4 * header.length + 64);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a header over 4 KiB, 16 KiB or 1 MiB before reading its items', async () => {
    for (const size of [4097, 16 * 1024, 1024 * 1024]) {
      const header = `t=1700000000,v1=${digest}${','.repeat(size)}=`.slice(0, size);
      expect(() => parseSignatureHeader(header)).toThrow(
        expect.objectContaining({ code: 'malformed_signature' }),
      );
      expect(readsOf(header)).toBeLessThanOrEqual(64);
    }
    // 4096 characters is still a header (a valid one padded with spaces).
    const padded = `t=1700000000,v1=${digest}`.padEnd(4096, ' ');
    expect(parseSignatureHeader(padded).signatures).toEqual([digest]);
  });

  it('refuses more than 16 v1 values before any HMAC, even when one of them is right', async () => {
    const payload = '{}';
    const signed = await signPayload({ payload, secret: 'whsec_x', timestamp: 1_700_000_000 });
    const right = signed.slice(signed.indexOf('v1='));
    const header = (garbage: number) => `t=1700000000,${`v1=${'0'.repeat(64)},`.repeat(garbage)}${right}`;
    const verify = (garbage: number) =>
      codeOf(
        verifySignature({ payload, header: header(garbage), secret: 'whsec_x', now: at(1_700_000_000) }),
      );
    expect(await verify(15)).toBe('ok');
    expect(await verify(16)).toBe('malformed_signature');
    expect(await verify(1927)).toBe('malformed_signature');
  });
});
