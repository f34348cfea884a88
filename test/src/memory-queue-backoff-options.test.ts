// exponentialBackoff's options: a delay no queue can use is refused where it is written, not at the first retry.
import { describe, expect, it } from 'vitest';
import { ConfigurationError, createMemoryQueue, exponentialBackoff } from 'workforce-webhooks';

describe('exponentialBackoff options', () => {
  it.each([
    ['baseMs NaN (an unset variable read with Number())', { baseMs: Number(undefined) }, /baseMs .* got NaN/],
    ['a negative baseMs', { baseMs: -1000 }, /baseMs .* got -1000/],
    ['an infinite baseMs', { baseMs: Number.POSITIVE_INFINITY }, /baseMs .* got Infinity/],
    ['baseMs as a string', { baseMs: '1000' as unknown as number }, /baseMs .* got string/],
    ['maxMs NaN', { maxMs: Number.NaN }, /maxMs .* got NaN/],
    ['a negative maxMs', { maxMs: -1 }, /maxMs .* got -1/],
  ])('refuses %s, naming the option and its value', (_, options, message) => {
    expect(() => exponentialBackoff(options)).toThrow(ConfigurationError);
    expect(() => createMemoryQueue({ backoff: exponentialBackoff(options) })).toThrow(message);
  });

  it('takes 0 and the bounds it documents, and draws each delay from the upper half of its ceiling', () => {
    expect(exponentialBackoff({ baseMs: 0 })(3)).toBe(0);
    const backoff = exponentialBackoff({ baseMs: 1000, maxMs: Number.POSITIVE_INFINITY });
    for (const attempt of [1, 2, 3, 4]) {
      const ceiling = 1000 * 2 ** (attempt - 1);
      const delay = backoff(attempt);
      expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
      expect(delay).toBeLessThanOrEqual(ceiling);
    }
    const capped = exponentialBackoff({ baseMs: 1000, maxMs: 4000 })(10);
    expect(capped).toBeGreaterThanOrEqual(2000);
    expect(capped).toBeLessThanOrEqual(4000);
  });
});
