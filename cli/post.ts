// One signed delivery POSTed like the service does: no redirects followed, a time limit on the answer.
import { answerStart } from '../api/answer-start.js';
import type { SignedDelivery } from '../testing/index.js';
import { unreachable } from './reach-failure.js';
import { redactUrl } from './url.js';

/** The most of an answer's body read: an endpoint that streams without end costs no more memory than this. */
export const MAX_ANSWER_BYTES = 65_536;

/** How the endpoint answered, or why it did not. */
export type PostResult =
  | {
      readonly status: number;
      /** The body's first `MAX_ANSWER_BYTES` at most. */
      readonly body: string;
      /** True when the body went on past them (the rest was not read). */
      readonly truncated: boolean;
      readonly ms: number;
      readonly location?: string;
    }
  | {
      readonly error: string;
      readonly ms: number;
      /** Why the endpoint could not be reached, without its URL (the same for every URL of one host). */
      readonly why?: string;
    };

/**
 * Sends `delivery` to `url` and waits at most `timeoutMs` for the answer.
 * @example
 * const result = await postDelivery('http://localhost:3000/webhooks', delivery, 10_000);
 */
export async function postDelivery(
  url: string,
  delivery: SignedDelivery<string>,
  timeoutMs: number,
): Promise<PostResult> {
  const started = performance.now();
  const ms = (): number => Math.round(performance.now() - started);
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body,
      // Spec rule 5: the service does not follow redirects.
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const { text: body, truncated } = await answerStart(response, MAX_ANSWER_BYTES);
    const location = response.headers.get('location');
    return { status: response.status, body, truncated, ms: ms(), ...(location !== null ? { location } : {}) };
  } catch (error) {
    if ((error as Error).name === 'TimeoutError')
      return { error: `no answer within ${timeoutMs} ms`, ms: ms() };
    // The URL, and fetch's words that may repeat it, are shown without the credentials it may carry.
    const why = redactUrl(
      URL.canParse(url) ? unreachable(new URL(url), error) : String((error as Error).message),
    );
    return { error: redactUrl(`could not reach ${url}: ${why}`), ms: ms(), why };
  }
}
