// A request written by hand on a raw socket, so no client library gives up first: for bodies that stall or trickle.
import { connect } from 'node:net';

/** What a raw socket got back: everything the server wrote, and whether the server closed the connection. */
export interface Exchange {
  readonly text: string;
  readonly closed: boolean;
}

/**
 * Sends the head of a signed delivery declaring the whole body, then `send` writes what it likes; resolves when
 * the server closes the connection, or after `waitMs` (generous: only order is asserted, never speed). `send`
 * answers how to stop writing (a trickle's timer).
 * @example
 * const { text, closed } = await rawExchange(url, headers, body, (write) => (write(body.slice(0, 20)), () => {}));
 */
export function rawExchange(
  url: string,
  head: Record<string, string>,
  body: string,
  send: (write: (chunk: string) => void) => () => void,
  waitMs = 15_000,
): Promise<Exchange> {
  const { hostname, port, pathname } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    let stop = (): void => {};
    const settle = (closed: boolean): void => {
      clearTimeout(timer);
      stop();
      socket.destroy();
      resolve({ text, closed });
    };
    const timer = setTimeout(() => settle(false), waitMs);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('end', () => settle(true));
    socket.on('close', () => settle(true));
    socket.on('error', () => settle(true));
    socket.on('connect', () => {
      const lines = [`POST ${pathname} HTTP/1.1`, `host: ${hostname}:${port}`];
      for (const [name, value] of Object.entries(head)) lines.push(`${name}: ${value}`);
      lines.push(`content-length: ${Buffer.byteLength(body)}`);
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      stop = send((chunk) => {
        if (!socket.destroyed) socket.write(chunk);
      });
    });
  });
}
