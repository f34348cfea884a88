// Statements a paused Postgres may still run after the store gave up on them (a claim, an ordering entry), given up
// again once it answers. Internal: not a subpath of the package.

/** What the store gives up once the server answers again: `add` one, `close` to stop. */
export interface Retractions<T> {
  /** `value`'s statement failed with no answer from the server (`error`): given up, for at most `lastingMs`. */
  add(key: string, value: T, lastingMs: number, error: unknown): void;
  close(): void;
}

/**
 * A statement whose answer never came (its deadline passed, its connection broke) may still land: a server that
 * stopped answering (paused, behind a partition) runs it once it answers again, and what it took (a claim, a key's
 * lease) is nobody's, so every delivery of the event, or every event of the record, would wait out that lease. Such
 * statements are undone by `send`, all pending ones at once, each `retryMs` while the server does not answer, then
 * once more (one still on its way when the first landed); kept no longer than their lease, and at most `max` of them.
 * An error the server answered with (a DatabaseError, with its severity, maybe the cause of one explained with its
 * fix) left nothing behind, and is not kept.
 * @example
 * const claims = createRetractions<Claim>((batch) => query(sql.retract, [ids(batch), tokens(batch)]), 2000, 10_000);
 */
export function createRetractions<T>(
  send: (values: readonly T[]) => Promise<unknown>,
  retryMs: number,
  max: number,
): Retractions<T> {
  const pending = new Map<string, { readonly value: T; readonly until: number; answered: boolean }>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const later = (): void => {
    if (timer !== undefined || pending.size === 0) return;
    timer = setTimeout(round, retryMs);
    timer.unref?.();
  };
  const round = (): void => {
    timer = undefined;
    const now = Date.now();
    for (const [key, each] of pending) if (each.until < now) pending.delete(key);
    if (pending.size === 0) return;
    const keys = [...pending.keys()];
    send(keys.map((key) => pending.get(key)!.value)).then(() => {
      for (const key of keys) {
        const each = pending.get(key);
        if (each?.answered) pending.delete(key);
        else if (each !== undefined) each.answered = true;
      }
      later();
    }, later);
  };
  return {
    add(key, value, lastingMs, error) {
      const { severity, cause } = (error ?? {}) as { severity?: unknown; cause?: { severity?: unknown } };
      if (severity !== undefined || cause?.severity !== undefined || pending.size >= max) return;
      pending.set(key, { value, until: Date.now() + lastingMs, answered: false });
      later();
    },
    close() {
      clearTimeout(timer);
      timer = undefined;
      pending.clear();
    },
  };
}
