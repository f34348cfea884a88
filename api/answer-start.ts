// An answer's body up to a size, read no further: a service, proxy or endpoint may stream without end.

/** The first bytes of a body as text, and whether more was sent. */
export interface AnswerStart {
  readonly text: string;
  /** How many bytes `text` was decoded from. */
  readonly bytes: number;
  /** True when the body went on past the bytes read; the rest was not read. */
  readonly truncated: boolean;
}

/**
 * Reads at most `maxBytes` of `response`'s body and cancels the rest, so an endless or huge answer costs no more
 * memory than that; its time is bounded by the request's own signal, and by `signal` when given, which cancels
 * the read and rejects with its reason even when the body does not heed the request's signal.
 * @example
 * const { text, truncated } = await answerStart(await fetch(url, { method: 'POST', body }), 65_536);
 */
export async function answerStart(
  response: Response,
  maxBytes: number,
  signal?: AbortSignal,
): Promise<AnswerStart> {
  if (response.body === null) return { text: '', bytes: 0, truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  // Cancelling ends a pending read (it resolves as done), so a body that ignores every signal still stops here.
  let stopped = false;
  const stop = (): void => {
    stopped = true;
    reader.cancel().catch(() => {});
  };
  if (signal?.aborted) stop();
  signal?.addEventListener('abort', stop, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
      if (size > maxBytes) {
        truncated = true;
        // Not awaited: a peer that stops reading must not hold the caller; cancelling drops the connection.
        reader.cancel().catch(() => {});
        break;
      }
    }
  } finally {
    signal?.removeEventListener('abort', stop);
  }
  if (stopped) throw signal?.reason;
  // Joined by hand: no Buffer, so the read API client runs on Workers and Deno as it does on Node.
  const bytes = new Uint8Array(Math.min(size, maxBytes));
  let at = 0;
  for (const chunk of chunks) {
    if (at === bytes.length) break;
    const part = chunk.subarray(0, bytes.length - at);
    bytes.set(part, at);
    at += part.length;
  }
  // A character cut at the limit reads as U+FFFD, like any invalid byte.
  return { text: new TextDecoder().decode(bytes), bytes: bytes.length, truncated };
}
