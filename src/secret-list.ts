// The `secret` option as a list, refusing a secret anyone could sign with (whitespace, a bare `whsec_`).
import { ConfigurationError } from './errors.js';

/** A signing secret, or several during rotation (any one that matches passes). */
export type Secret = string | readonly string[];

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
