// The memory queue's dead letters at `maxDeadLetters`: each new letter drops the oldest in constant time.
import { describe, expect, it } from 'vitest';
import { CURRENT_API_VERSION, type DeadLetter } from 'workforce-webhooks';
import { DeadLetterList } from '../../src/dead-letter-list.js';

const letter = (id: number): DeadLetter => ({
  event: {
    id: `evt-${id}`,
    type: 'leave.approved',
    apiVersion: CURRENT_API_VERSION,
    occurredAt: '2026-10-15T09:00:00.000Z',
    organizationId: '00000000-0000-4000-8000-000000000001',
    data: {},
  } as DeadLetter['event'],
  deliveryId: undefined,
  attempts: 1,
  error: new Error('down'),
  failedAt: id,
});

describe('dead letters kept at maxDeadLetters', () => {
  it('keeps the newest letters and drops the oldest one per letter added, without walking past those dropped before', {
    timeout: 120_000,
  }, () => {
    const max = 150_000;
    const list = new DeadLetterList(max);
    const dropped: string[] = [];
    const started = performance.now();
    // An outage that fails twice the limit: the first `max` fill it, every later one drops the oldest.
    for (let i = 0; i < 2 * max; i++) {
      const gone = list.add(letter(i));
      if (gone !== undefined) dropped.push(gone);
    }
    const elapsed = performance.now() - started;
    expect(list.size).toBe(max);
    expect(dropped).toHaveLength(max);
    expect(dropped[0]).toBe('evt-0');
    expect(dropped.at(-1)).toBe(`evt-${max - 1}`);
    const page = list.page({ limit: 2 });
    expect(page.items.map((each) => each.event.id)).toEqual([`evt-${2 * max - 1}`, `evt-${2 * max - 2}`]);
    expect(list.get(`evt-${max}`)?.failedAt).toBe(max);
    expect(list.get(`evt-${max - 1}`)).toBeUndefined();
    // A wide bound, far above a linear run (under a second) on a loaded machine: walking past the holes the earlier
    // drops left, from the front, for every letter takes about a minute.
    expect(elapsed).toBeLessThan(30_000);
  });
});
