// What the CLI shows of an endpoint's answer body: in `check`, the receiver's own answers only; in `send`, the body
// with nothing in it that a terminal would obey.
import { answers, type WebhookResponse } from '../src/responses.js';
import { MAX_ANSWER_BYTES } from './post.js';

// Every body the receiver answers with (`{"error":"signature_mismatch"}`, `{"received":true}`...): the status table.
const RECEIVER_BODIES: ReadonlySet<string> = new Set(
  Object.values(answers).flatMap((a: WebhookResponse | Readonly<Record<string, WebhookResponse>>) =>
    'body' in a && typeof a.body === 'string'
      ? [a.body]
      : Object.values(a as Readonly<Record<string, WebhookResponse>>).map((r) => r.body),
  ),
);

/**
 * The body as `check` prints it: one of the receiver's answers as sent, else only its size. Anything else (an error
 * page, a stack trace, a proxy's answer) may reflect the request's signature, a secret or terminal control bytes,
 * so it is not echoed; `send` prints it, made safe for a terminal.
 * @example
 * shownBody('{"error":"signature_mismatch"}') // '{"error":"signature_mismatch"}'
 */
export function shownBody(body: string, truncated = false): string {
  if (body === '') return '(empty body)';
  if (truncated)
    return `(over ${MAX_ANSWER_BYTES} bytes, not shown: not one of the receiver's {"error": code} answers)`;
  const trimmed = body.trim();
  if (RECEIVER_BODIES.has(trimmed)) return trimmed;
  // Re-serialised, so a framework's pretty-printing of the same JSON still reads as the receiver's answer.
  const compact = compactJson(trimmed);
  if (compact !== undefined && RECEIVER_BODIES.has(compact)) return compact;
  const bytes = Buffer.byteLength(body);
  return `(${bytes} byte${bytes === 1 ? '' : 's'}, not shown: not one of the receiver's {"error": code} answers)`;
}

function compactJson(text: string): string | undefined {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return undefined;
  }
}

// Control characters (C0 but tab, newline and a CR ending a line; DEL; C1) and the bidirectional overrides: an
// escape sequence in an answer could retitle the terminal, rewrite the clipboard or hide text; a lone CR could
// print over a line. Each is shown as its \u escape instead.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's purpose.
const UNSAFE = /\r(?!\n)|[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * The body as `send` prints it: whole as read, with each character a terminal would act on written as its `\u`
 * escape, and a note when the endpoint sent more than was read.
 * @example
 * printedBody('\u001b[2Jok', false) // '\\u001b[2Jok'
 */
export function printedBody(body: string, truncated: boolean): string {
  const shown = body.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return truncated
    ? `${shown}\n(the answer goes on past ${MAX_ANSWER_BYTES} bytes; the rest was not read)`
    : shown;
}
