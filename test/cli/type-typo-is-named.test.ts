// `send` and `check` with a --type a keystroke or two from a type the service sends: it is sent as given (a type of
// one's own is allowed), with one line on stderr naming the type meant; a type of one's own gets no such line.
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run.js';
import { capture } from './capture.js';
import { serveEndpoint } from './endpoint.js';

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function run(argv: string[]) {
  const types: string[] = [];
  const url = await serveEndpoint(
    (req, res) => {
      types.push(String(req.headers['svc-event-type']));
      res.writeHead(202).end('{"received":true}');
    },
    '/webhooks/workforce',
    closers,
  );
  const io = capture('', { env: { WORKFORCE_WEBHOOK_SECRET: 'whsec_type_typo' } });
  const code = await runCli([...argv, '--url', url], io);
  return { code, err: io.err, types };
}

const NOTE =
  'workforce-webhooks: --type leave.aproved is no event type the service sends: did you mean leave.approved? sent as given, no handler of leave.approved runs on it\n';

describe('a --type one keystroke from a type the service sends', () => {
  it('send sends it as given and names the type meant, once', async () => {
    const { code, err, types } = await run(['send', '--type', 'leave.aproved']);
    expect(code).toBe(0);
    expect(types).toEqual(['leave.aproved']);
    expect(err.split(NOTE)).toHaveLength(2);
    expect(err.startsWith(NOTE)).toBe(true);
  });

  it('check names it once before its checks', async () => {
    const { err, types } = await run(['check', '--type', 'leave.aproved']);
    expect(types).toContain('leave.aproved');
    expect(err.split(NOTE)).toHaveLength(2);
    expect(err.startsWith(NOTE)).toBe(true);
  });

  it('a type of its own, far from any the service sends, gets no note', async () => {
    const { code, err, types } = await run(['send', '--type', 'benefits.enrolled', '--data', '{}']);
    expect(code).toBe(0);
    expect(types).toEqual(['benefits.enrolled']);
    expect(err).toBe('');
  });
});
