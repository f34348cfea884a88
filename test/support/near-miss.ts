// Strings one edit away from valid ones, for property tests of hand-written checks against their regex.
import fc from 'fast-check';

/**
 * `valid` strings with one of `texts` put in place of a character or inserted anywhere, or upper-cased, or left as
 * they are: the near misses a character-by-character check can get wrong.
 * @example
 * const uuidLike = nearMiss(fc.uuid({ version: 4 }), ['', '-', 'g']);
 */
export function nearMiss(valid: fc.Arbitrary<string>, texts: readonly string[]): fc.Arbitrary<string> {
  return fc
    .tuple(valid, fc.nat(), fc.constantFrom(...texts), fc.constantFrom('replace', 'insert', 'upper', 'keep'))
    .map(([text, n, edit, how]) => {
      if (how === 'upper') return text.toUpperCase();
      if (how === 'keep') return text;
      const at = n % (text.length + 3);
      return text.slice(0, at) + edit + text.slice(how === 'replace' ? at + 1 : at);
    });
}
