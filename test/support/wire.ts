// A raw HTTP/1.1 connection that reads answers one by one off the same socket, so keep-alive reuse can be seen.
import { connect } from 'node:net';
import { onTestFinished } from 'vitest';

/** One parsed answer. */
export interface WireAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** A raw connection to a mounted app. */
export interface Wire {
  write(data: string | Uint8Array): void;
  /** The next answer, or undefined if the server closed (or `waitMs` passed) before a whole one came. */
  next(options?: { readonly waitMs?: number }): Promise<WireAnswer | undefined>;
  /** Resolves true when the server closed the connection, false if it is still open after `waitMs`. */
  closed(waitMs?: number): Promise<boolean>;
  destroy(): void;
}

/**
 * Opens a raw socket to the app's host and port; destroyed after the test.
 * @example
 * const wire = await openWire(url); wire.write(request('POST', url, headers, body)); await wire.next();
 */
export async function openWire(url: string): Promise<Wire> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  onTestFinished(() => {
    socket.destroy();
  });
  let buffer = Buffer.alloc(0);
  let ended = false;
  const waiters = new Set<() => void>();
  const wake = (): void => {
    for (const waiter of [...waiters]) waiter();
  };
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    wake();
  });
  const end = (): void => {
    ended = true;
    wake();
  };
  socket.on('end', end);
  socket.on('close', end);
  socket.on('error', end);

  const until = (ready: () => boolean, waitMs: number): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => {
        if (ready() || ended) done();
      };
      const timer = setTimeout(() => done(), waitMs);
      const done = (): void => {
        clearTimeout(timer);
        waiters.delete(check);
        resolve();
      };
      waiters.add(check);
      check();
    });

  // Takes one whole answer off the front of the buffer, if there is one.
  const take = (): WireAnswer | undefined => {
    const headEnd = buffer.indexOf('\r\n\r\n');
    if (headEnd === -1) return undefined;
    const [statusLine = '', ...lines] = buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
    const status = Number(statusLine.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    let rest = buffer.subarray(headEnd + 4);
    let body = '';
    if (status < 200 || status === 204 || status === 304) {
      // No body.
    } else if (headers['transfer-encoding']?.toLowerCase().includes('chunked')) {
      let offset = 0;
      const parts: Buffer[] = [];
      for (;;) {
        const lineEnd = rest.indexOf('\r\n', offset);
        if (lineEnd === -1) return undefined;
        const size = Number.parseInt(rest.subarray(offset, lineEnd).toString('latin1'), 16);
        if (rest.length < lineEnd + 2 + size + 2) return undefined;
        if (size === 0) {
          offset = lineEnd + 4;
          break;
        }
        parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
        offset = lineEnd + 2 + size + 2;
      }
      body = Buffer.concat(parts).toString('utf8');
      rest = rest.subarray(offset);
    } else if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      if (rest.length < length) return undefined;
      body = rest.subarray(0, length).toString('utf8');
      rest = rest.subarray(length);
    } else if (!ended) {
      // A body delimited by the connection's close.
      return undefined;
    } else {
      body = rest.toString('utf8');
      rest = Buffer.alloc(0);
    }
    buffer = rest;
    return { status, headers, body };
  };

  return {
    write(data) {
      if (!socket.destroyed) socket.write(data);
    },
    async next({ waitMs = 5000 } = {}) {
      let answer: WireAnswer | undefined;
      await until(() => {
        answer = take();
        return answer !== undefined;
      }, waitMs);
      return answer ?? take();
    },
    async closed(waitMs = 5000) {
      await until(() => false, waitMs);
      return ended;
    },
    destroy() {
      socket.destroy();
    },
  };
}

/**
 * The head of a request, as text, with the given headers (no length added).
 * @example
 * wire.write(requestHead('POST', url, { ...headers, 'transfer-encoding': 'chunked' }));
 */
export function requestHead(method: string, url: string, headers: Readonly<Record<string, string>>): string {
  const { host, pathname, search } = new URL(url);
  const lines = [`${method} ${pathname}${search} HTTP/1.1`, `host: ${host}`];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/**
 * A whole request with a content-length.
 * @example
 * wire.write(request('POST', url, delivery.headers, delivery.body));
 */
export function request(
  method: string,
  url: string,
  headers: Readonly<Record<string, string>>,
  body: string,
): Uint8Array {
  const bytes = Buffer.from(body);
  const head = requestHead(method, url, { ...headers, 'content-length': String(bytes.length) });
  return Buffer.concat([Buffer.from(head, 'latin1'), bytes]);
}

/**
 * A body as chunked transfer encoding, in chunks of `size` bytes, with its last chunk.
 * @example
 * wire.write(chunked(body, 512));
 */
export function chunked(body: string, size: number): Uint8Array {
  const bytes = Buffer.from(body);
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) {
    const chunk = bytes.subarray(i, i + size);
    parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`, 'latin1'), chunk, Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}
