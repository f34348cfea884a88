// Both `#crypto` backends run one HMAC per secret, however many `v1` candidates a header carries: counted.
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';

// node:crypto's createHmac, counted: the node backend imports it by name, so it is wrapped where it is imported.
const counted = vi.hoisted(() => ({ createHmac: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:crypto')>();
  return {
    ...original,
    createHmac: (...args: Parameters<typeof original.createHmac>) => {
      counted.createHmac += 1;
      return original.createHmac(...args);
    },
  };
});

const node = await import('../../../src/crypto/node.js');
const web = await import('../../../src/crypto/web.js');

afterEach(() => {
  vi.restoreAllMocks();
});

async function hmacsOf(
  backend: 'node' | 'web',
  secrets: readonly string[],
  payload: Uint8Array,
  candidates: readonly string[],
): Promise<{ hmacs: number; matched: boolean }> {
  if (backend === 'node') {
    counted.createHmac = 0;
    const matched = await node.verifyDigests(secrets, '1700000000', payload, candidates);
    return { hmacs: counted.createHmac, matched };
  }
  const sign = vi.spyOn(crypto.subtle, 'sign');
  const verify = vi.spyOn(crypto.subtle, 'verify');
  const matched = await web.verifyDigests(secrets, '1700000000', payload, candidates);
  const hmacs = sign.mock.calls.length + verify.mock.calls.length;
  vi.restoreAllMocks();
  return { hmacs, matched };
}

describe('HMACs per verification', () => {
  it('is one per secret on both backends, whatever the number of v1 candidates', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ minLength: 1, maxLength: 20 }), { minLength: 1, maxLength: 3 }),
        fc.array(fc.stringMatching(/^[0-9a-f]{64}$/), { maxLength: 16 }),
        fc.uint8Array({ maxLength: 256 }),
        fc.boolean(),
        async (secrets, garbage, payload, withRight) => {
          const right = await node.signHex(secrets[0]!, '1700000000', payload);
          const candidates = withRight ? [...garbage, right] : garbage;
          const onNode = await hmacsOf('node', secrets, payload, candidates);
          const onWeb = await hmacsOf('web', secrets, payload, candidates);
          expect(onNode.hmacs).toBe(secrets.length);
          expect(onWeb.hmacs).toBe(onNode.hmacs);
          expect(onWeb.matched).toBe(onNode.matched);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('stays one for a 1 MiB body and 16 garbage candidates', async () => {
    const payload = new Uint8Array(1024 * 1024);
    const garbage = Array.from({ length: 16 }, (_, i) => i.toString(16).padStart(64, '0'));
    for (const backend of ['node', 'web'] as const) {
      expect(await hmacsOf(backend, ['whsec_a'], payload, garbage)).toEqual({ hmacs: 1, matched: false });
    }
  });
});
