// The node:http and Hono examples listen for their server's 'error' to say a port in use in one line. A server error
// after it listens (Node emits one when accepting a connection fails, e.g. ENOBUFS) has nothing to do with the port:
// it is said as it is, and the example goes on serving rather than exit telling the user to pick another port.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../contract/adapter-client.js';
import { root } from '../support/packed.js';

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

// Loaded before the example: on SIGUSR2, every listening server emits the error Node's net.Server emits for a failed
// accept (the event and the error's shape are Node's own; only the moment is chosen here).
const ACCEPT_FAILS = `data:text/javascript,${encodeURIComponent(`
import { Server } from 'node:net';
const servers = new Set();
const listen = Server.prototype.listen;
Server.prototype.listen = function (...args) { servers.add(this); return listen.apply(this, args); };
process.on('SIGUSR2', () => {
  for (const server of servers)
    if (server.listening)
      server.emit('error', Object.assign(new Error('accept ENOBUFS'), { code: 'ENOBUFS', errno: -105, syscall: 'accept' }));
});
`)}`;

describe('an example whose server errs after it listens', { timeout: 120_000 }, () => {
  it.each(['examples/node/server.ts', 'examples/hono/quickstart.ts', 'examples/hono/server.ts'])(
    '%s says the error as it is and keeps serving',
    async (path) => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--import', ACCEPT_FAILS, path], {
        cwd: root,
        env: { ...process.env, PORT: '0', WORKFORCE_WEBHOOK_SECRET: 'whsec_later_server_error' },
      });
      closers.push(() => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
      let output = '';
      const collect = (chunk: string): void => {
        output += chunk;
      };
      child.stdout.setEncoding('utf8').on('data', collect);
      child.stderr.setEncoding('utf8').on('data', collect);
      await eventually(() => expect(output).toMatch(/listening on http:\/\/localhost:\d+\//), {
        tries: 600,
        intervalMs: 50,
      });
      const port = /localhost:(\d+)\//.exec(output)![1];

      child.kill('SIGUSR2');
      await eventually(
        () => {
          if (child.exitCode !== null) throw new Error(`exited ${child.exitCode}: ${output}`);
          expect(output).toContain('accept ENOBUFS');
        },
        { tries: 600, intervalMs: 50 },
      );

      expect(output).toContain('server: accept ENOBUFS');
      expect(output).not.toContain('pick another');
      // Still serving: the webhook route answers a GET as the receiver does, 405 with Allow: POST.
      const answer = await fetch(`http://127.0.0.1:${port}/webhooks/workforce`);
      expect(answer.status).toBe(405);
      expect(answer.headers.get('allow')).toBe('POST');
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
    },
  );
});
