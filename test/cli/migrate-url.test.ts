// `migrate --postgres` that is not a database URL is a usage mistake, said before any connection is tried.
import { describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run.js';
import { capture } from './capture.js';

describe('migrate --postgres that pg would misread', () => {
  it.each([
    ['a word', 'not a url'],
    ['another scheme', 'mysql://user:hunter2@db.internal/app'],
  ])('refuses %s with exit 2, the forms it takes, and no password', async (_, value) => {
    const io = capture();
    expect(await runCli(['migrate', '--postgres', value], io)).toBe(2);
    expect(io.err).toMatch(
      /^workforce-webhooks: error: --postgres must be a postgres:\/\/ or postgresql:\/\/ URL .*\(see workforce-webhooks migrate --help\)\n$/,
    );
    expect(io.err).not.toContain('hunter2');
    expect(io.out).toBe('');
  });
});
