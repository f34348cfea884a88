// The contract suite's HTTP client and small async tools: every answer is checked against spec rule 5 and for leaks.
import { expect } from 'vitest';

/** Put in every error a test handler throws: no answer may ever contain it. */
export const LEAK_MARKER = 'LEAKED-HANDLER-MESSAGE-hunter2';

/** An answer as the sender sees it. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/**
 * Sends one request over loopback and reads the whole answer; fails the test on a 3xx or a leaked handler message.
 * @example
 * const answer = await send(url, { method: 'GET' });
 */
export async function send(url: string, init: RequestInit = {}): Promise<Answer> {
  // `manual`: a redirect must surface as the 3xx it is (spec rule 5: a 3xx counts as a failed delivery).
  const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(15_000), ...init });
  const text = await response.text();
  expect(response.status >= 300 && response.status < 400, `a ${response.status} answer`).toBe(false);
  expect(response.headers.has('location')).toBe(false);
  expect(text).not.toContain(LEAK_MARKER);
  return { status: response.status, headers: response.headers, text };
}

/**
 * POSTs a signed delivery (or any body and headers) the way the service does.
 * @example
 * await post(url, await createSignedDelivery({ secret, type: 'leave.approved' }));
 */
export function post(
  url: string,
  delivery: { readonly body: string; readonly headers: Readonly<Record<string, string>> },
): Promise<Answer> {
  return send(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
}

/**
 * POSTs a delivery as a stream of three chunks with no Content-Length (chunked transfer encoding), as a proxy that
 * re-frames bodies may.
 * @example
 * await postChunked(url, await createSignedDelivery({ secret, type: 'leave.approved' }));
 */
export function postChunked(
  url: string,
  delivery: { readonly body: string; readonly headers: Readonly<Record<string, string>> },
): Promise<Answer> {
  const bytes = new TextEncoder().encode(delivery.body);
  const third = Math.ceil(bytes.byteLength / 3);
  const chunks = [bytes.subarray(0, third), bytes.subarray(third, 2 * third), bytes.subarray(2 * third)];
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks.shift();
      if (chunk === undefined) controller.close();
      else controller.enqueue(chunk);
    },
  });
  return send(url, { method: 'POST', headers: delivery.headers, body, duplex: 'half' } as RequestInit);
}

/**
 * Asserts status, exact JSON body and, when given, headers of an answer from DESIGN.md's status table.
 * @example
 * expectAnswer(answer, 202, { received: true });
 */
export function expectAnswer(
  answer: Answer,
  status: number,
  body: object,
  headers: Readonly<Record<string, string>> = {},
): void {
  expect({ status: answer.status, body: JSON.parse(answer.text) as unknown }).toEqual({ status, body });
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  for (const [name, value] of Object.entries(headers)) expect(answer.headers.get(name)).toBe(value);
}

/** A promise with its resolve function outside, to hold a handler until the test lets it go. */
export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

/**
 * Creates a deferred promise.
 * @example
 * const gate = deferred<void>(); receiver.on('leave.approved', () => gate.promise); gate.resolve();
 */
export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * Retries `check` every few milliseconds until it stops throwing; for state that settles a few ticks after an answer.
 * @example
 * await eventually(async () => expectAnswer(await post(url, delivery), 200, duplicate));
 */
export async function eventually(
  check: () => unknown,
  { tries = 200, intervalMs = 10 }: { readonly tries?: number; readonly intervalMs?: number } = {},
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await check();
      return;
    } catch (error) {
      if (attempt >= tries) throw error;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}
