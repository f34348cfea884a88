// `send` or `check` pointed at a port where something other than an HTTP server answers (an SSH, Postgres or mail
// port: a typo in the port): the line says the answer is not HTTP and to check the port, not only llhttp's code.
import { once } from 'node:events';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run.js';
import { capture } from './capture.js';

let server: Server | undefined;
const sockets = new Set<Socket>();
afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** A loopback TCP server that greets each connection as an SSH server does, then closes it. */
async function sshLike(): Promise<string> {
  server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.end('SSH-2.0-OpenSSH_9.6\r\n');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const cli = async (args: readonly string[]): Promise<{ code: number; out: string; err: string }> => {
  const io = capture('{}', { env: { WORKFORCE_WEBHOOK_SECRET: 'whsec_not_http' } });
  const code = await runCli(args, io);
  return { code, out: io.out, err: io.err };
};

describe('an endpoint URL whose port answers in another protocol', () => {
  it('send says the port does not answer in HTTP and to check the port, with the code last', async () => {
    const host = await sshLike();
    const { code, err } = await cli(['send', '--url', `http://${host}/webhooks`, '--type', 'leave.approved']);

    expect(err).toContain(`${host} does not answer in HTTP: check that the port in the URL`);
    expect(err).toMatch(/; error code HPE_\w+\n$/);
    expect(code).toBe(1);
  });

  it('check says it once, for every check it fails', async () => {
    const host = await sshLike();
    const { code, out } = await cli(['check', '--url', `http://${host}/webhooks`, '--timeout-ms', '5000']);

    expect(out.split(`${host} does not answer in HTTP`)).toHaveLength(2);
    expect(code).toBe(1);
  });
});
