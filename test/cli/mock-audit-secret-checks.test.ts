// `mock --deliver-to`'s secret gets the checks `send` makes: one only whitespace is refused, one padded or quoted (as
// copied from a .env file) is warned of with the fix, before the mock starts; a good one is used quietly.
import { describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run.js';
import { capture } from './capture.js';

const DELIVER_TO = ['--deliver-to', 'http://127.0.0.1:3000/webhooks/workforce'];

/** Runs `mock --port 0` with `args` until it has printed its keys (or ended), then stops it. */
async function runMock(
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; out: string; err: string }> {
  const controller = new AbortController();
  const io = capture('', { signal: controller.signal, env });
  const running = runCli(['mock', '--port', '0', ...args], io);
  const ended = await Promise.race([
    running.then(() => true),
    expect
      .poll(() => io.out)
      .toContain('Delivering every event')
      .then(() => false),
  ]);
  if (!ended) controller.abort();
  return { code: await running, out: io.out, err: io.err };
}

describe('mock --deliver-to checks its secret as send does', () => {
  it('refuses a --secret that is only whitespace, with the fix, and starts nothing', async () => {
    const { code, out, err } = await runMock([...DELIVER_TO, '--secret', '   ']);
    expect(code).toBe(2);
    expect(err).toMatch(/--secret is only whitespace: pass the endpoint's whsec_ secret/);
    expect(out).toBe('');
  });

  it('refuses a $WORKFORCE_WEBHOOK_SECRET that is only whitespace, naming the variable', async () => {
    const { code, err } = await runMock(DELIVER_TO, { WORKFORCE_WEBHOOK_SECRET: ' \r\n' });
    expect(code).toBe(2);
    expect(err).toMatch(/\$WORKFORCE_WEBHOOK_SECRET is only whitespace/);
  });

  it('warns once of a padded --secret and of a quoted variable, saying the fix, and still runs', async () => {
    const padded = await runMock([...DELIVER_TO, '--secret', 'whsec_padded\r']);
    expect(padded.code).toBe(0);
    expect(padded.err).toBe(
      'workforce-webhooks: warning: --secret has leading or trailing whitespace (a stray newline or \\r, as copied from a .env file?); it signs as given, whitespace included, so only a receiver given the same value accepts it: remove the whitespace where the value is set\n',
    );
    const quoted = await runMock(DELIVER_TO, { WORKFORCE_WEBHOOK_SECRET: '"whsec_quoted"' });
    expect(quoted.code).toBe(0);
    expect(quoted.err).toMatch(
      /^workforce-webhooks: warning: \$WORKFORCE_WEBHOOK_SECRET is wrapped in quotes \(as copied from a \.env file\).*remove the quotes where the value is set\n$/,
    );
    expect(quoted.out).toContain('signed with the secret from $WORKFORCE_WEBHOOK_SECRET');
  });

  it('says nothing of a good secret, and makes and shows a new one when none is given', async () => {
    const given = await runMock([...DELIVER_TO, '--secret', 'whsec_good']);
    expect(given.err).toBe('');
    expect(given.out).toContain('signed with the secret from --secret');
    expect(given.out).not.toContain('whsec_good');
    const none = await runMock(DELIVER_TO, { WORKFORCE_WEBHOOK_SECRET: '' });
    expect(none.err).toBe('');
    expect(none.out).toMatch(/signed with a new secret: whsec_\S+/);
  });
});
