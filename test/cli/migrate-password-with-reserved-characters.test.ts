// `migrate --postgres` whose password holds a character the URL reserves: a usage mistake said with the fix before any
// connection is tried, instead of pg's bare "Invalid URL" or a connect to the user name taken for a host.
import { describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run.js';
import { capture } from './capture.js';

describe('migrate --postgres with a password pg would misread', () => {
  it.each([
    ['a # in it', 'postgres://app:hun#ter2@127.0.0.1:1/app', /--postgres is not a valid URL: percent-encode/],
    [
      'a / after digits',
      'postgres://app:1234/hunter2@127.0.0.1:1/app',
      /--postgres has an @ after its host .*: percent-encode the password/,
    ],
  ])('refuses a password with %s with exit 2, the fix, and no password', async (_, value, fix) => {
    const io = capture();
    expect(await runCli(['migrate', '--postgres', value], io)).toBe(2);
    expect(io.err).toMatch(fix);
    expect(io.err).toMatch(/^workforce-webhooks: error: .*\(see workforce-webhooks migrate --help\)\n$/);
    expect(io.err).not.toMatch(/hunter2/);
    expect(io.out).toBe('');
  });
});
