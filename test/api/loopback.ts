// A real node:http server on a free loopback port, answering as each test says: the service misbehaving on purpose.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running loopback server: its base URL, the requests it saw, and `close`. */
export interface Loopback {
  readonly baseUrl: string;
  readonly requests: URL[];
  close(): Promise<void>;
}

/**
 * Starts a server calling `answer` for every request (which may never answer, to test deadlines).
 * @example
 * const server = await loopback((req, res) => envelope(res, 200, []));
 */
export async function loopback(
  answer: (req: IncomingMessage, res: ServerResponse, index: number) => void,
): Promise<Loopback> {
  const requests: URL[] = [];
  const server = createServer((req, res) => {
    requests.push(new URL(req.url ?? '/', 'http://loopback.invalid'));
    answer(req, res, requests.length - 1);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Writes a response envelope: `data` on success, `isSuccessful: false` with a code otherwise.
 * @example
 * envelope(res, 503, null, { 'retry-after': '2' });
 */
export function envelope(
  res: ServerResponse,
  status: number,
  data: unknown,
  headers: Record<string, string> = {},
): void {
  const ok = status >= 200 && status < 300;
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  res.end(
    JSON.stringify(
      ok
        ? { isSuccessful: true, code: '00', message: 'Success', data }
        : { isSuccessful: false, code: `failed_${status}`, message: 'failed on purpose', data: null },
    ),
  );
}

/** A page of `data` as the paged lists send it. */
export const page = (data: unknown[]): object => ({
  data,
  pageNumber: 1,
  pageSize: 25,
  totalRecords: data.length,
  totalPages: 1,
});
