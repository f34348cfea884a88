// A request with another method than POST whose body stalls, through every adapter on loopback: answered 405 at
// once, unread, never after waiting out bodyTimeoutMs for a body nobody will use.
import { connect } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { leaveApproved } from '../contract/adapter-dedupe.js';
import { watchedReceiver } from '../contract/adapter-suite.js';
import { everyAdapter } from '../support/node-stream-adapters.js';

// Far past the wait below: an adapter that reads the body first cannot answer in time.
const BODY_TIMEOUT_MS = 120_000;
// A generous bound on a hang, not a measure of speed.
const WAIT_MS = 30_000;

// Writes the head of a request declaring `declared` bytes and the first 20 of them, then nothing more; resolves
// with what the server wrote once its answer's body is in, or at `WAIT_MS`.
function stalledRequest(url: string, method: string, head: Record<string, string>): Promise<string> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    const settle = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(text);
    };
    const timer = setTimeout(settle, WAIT_MS);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('"error"')) settle();
    });
    socket.on('close', settle);
    socket.on('error', settle);
    socket.on('connect', () => {
      const lines = [`${method} ${pathname} HTTP/1.1`, `host: ${hostname}:${port}`];
      for (const [name, value] of Object.entries(head)) lines.push(`${name}: ${value}`);
      socket.write(`${lines.join('\r\n')}\r\ncontent-length: 1000\r\n\r\n${'x'.repeat(20)}`);
    });
  });
}

for (const [name, mount] of Object.entries(everyAdapter)) {
  describe(name, () => {
    for (const method of ['PUT', 'PATCH']) {
      it(`answers a ${method} whose body stalls 405 method_not_allowed unread, without waiting for the body`, async () => {
        const { receiver, seen } = watchedReceiver({ bodyTimeoutMs: BODY_TIMEOUT_MS });
        const app = await mount(receiver);
        onTestFinished(() => app.close());
        const { headers } = await leaveApproved();
        const text = await stalledRequest(app.url, method, headers);
        expect(text).toMatch(/^HTTP\/1\.1 405 /);
        expect(text).toMatch(/^allow: POST\r$/im);
        expect(text).toContain('{"error":"method_not_allowed"}');
        await receiver.close();
        expect(seen).toEqual([]);
      }, 60_000);
    }
  });
}
