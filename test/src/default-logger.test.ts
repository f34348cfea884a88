// With no `logger` option, mistakes reach the real stderr once each, with their fix; normal traffic prints nothing.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));

async function app(scenario: 'normal' | 'mistakes' | 'silenced') {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.WORKFORCE_WEBHOOK_SECRET;
  const { stdout, stderr } = await run(
    process.execPath,
    ['--import', 'tsx', 'test/support/default-logger-app.ts', scenario],
    { cwd: root, env, timeout: 60_000 },
  );
  return { answers: JSON.parse(stdout) as Record<string, number[]>, stderr };
}

const count = (text: string, part: string): number => text.split(part).length - 1;

describe('the default logger, on the real stderr of a child process', () => {
  it('prints nothing for normal traffic', async () => {
    const { answers, stderr } = await app('normal');
    expect(answers).toEqual({
      'accepted then duplicate': [202, 200],
      'no handler': [200],
      GET: [405],
      'unsigned probe': [400],
      'lone forgery': [400],
      accepted: [202],
    });
    expect(stderr).toBe('');
  });

  it('names each misconfiguration once, with its fix', async () => {
    const { answers, stderr } = await app('mistakes');
    expect(answers).toEqual({
      'wrong secret': [400, 400, 400],
      'dead letter': [202],
      'not configured': [500, 500],
      'configured later': [202],
      'parsed body': [500, 500],
    });
    // The secret with a trailing newline, warned at createReceiver as Stripe does.
    expect(count(stderr, 'the secret has leading or trailing whitespace')).toBe(1);
    // Three mismatches in a row: one warning, with the hint.
    expect(count(stderr, '400 signature_mismatch')).toBe(1);
    expect(stderr).toContain(
      "Is this the endpoint's current `whsec_` secret? Rotating? Pass both: `secret: [current, next]`.",
    );
    // The handler's failure and then its dead letter, once each.
    expect(count(stderr, 'workforce-webhooks: handler failed')).toBe(1);
    expect(stderr).toContain('the calendar service said no');
    expect(count(stderr, 'event dead-lettered after its last attempt')).toBe(1);
    // Two deliveries before the secret was set: one line naming the variable and the option.
    expect(count(stderr, 'no signing secret is configured')).toBe(1);
    expect(stderr).toContain('Set WORKFORCE_WEBHOOK_SECRET');
    expect(stderr).toContain('`secret: () => process.env.WORKFORCE_WEBHOOK_SECRET`');
    // express.json() before the route, twice: one line with the fix, and the fix printed once.
    expect(count(stderr, 'the raw request body is not available')).toBe(1);
    expect(count(stderr, 'Mount the webhook route before any body parser')).toBe(1);
    // Never the secret itself.
    expect(stderr).not.toContain('whsec_default_logger');
    expect(stderr).not.toContain('whsec_not_this');
  });

  it('prints nothing with logger: false', async () => {
    const { answers, stderr } = await app('silenced');
    expect(answers['parsed body']).toEqual([500, 500]);
    expect(stderr).toBe('');
  });
});
