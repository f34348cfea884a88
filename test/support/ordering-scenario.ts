// The ordering scenario of spec rule 4: leave requests through their lifecycle, delivered shuffled and duplicated.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import type { WorkforceEvent } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { createSender, type Subscription } from '../../testing/mock-service/sender.js';

const encoder = new TextEncoder();

/**
 * A signed delivery of a leave event of record `key`, occurring `second` seconds past 08:00:00 on 2026-11-02 (so
 * that a later second is a newer event), as `receiver.handle` takes it.
 * @example
 * await receiver.handle(await signedLeave(secret, 'leave.approved', 2, key));
 */
export async function signedLeave(
  secret: string,
  type: string,
  second: number,
  key: string,
): Promise<{ method: string; headers: Record<string, string>; body: Uint8Array; event: WorkforceEvent }> {
  const signed = await createSignedDelivery({
    secret,
    type,
    occurredAt: `2026-11-02T08:00:${String(second).padStart(2, '0')}.000000Z`,
    data: { leaveRequestId: key } as never,
  });
  return { method: 'POST', headers: signed.headers, body: encoder.encode(signed.body), event: signed.event };
}

/**
 * Waits, 5 ms at a time, until `check` holds; throws naming `what` after `timeoutMs`.
 * @example
 * await until(() => ran.length === 2, 'both events');
 */
export async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** One run of a handler, as recorded: its start or end, the record key, the event and the state it applied. */
export interface RunRecord {
  readonly kind: 'start' | 'end';
  readonly key: string;
  readonly eventId: string;
  readonly state: string;
}

/** The leave events of `count` requests, each requested → approved → cancelled (or rejected), a second apart. */
export function leaveLifecycles(count: number): WorkforceEvent[] {
  const events: WorkforceEvent[] = [];
  const start = Date.parse('2026-11-02T08:00:00.000Z');
  for (let i = 0; i < count; i++) {
    const leaveRequestId = crypto.randomUUID();
    const steps =
      i % 3 === 0
        ? ['leave.requested', 'leave.rejected']
        : ['leave.requested', 'leave.approved', 'leave.cancelled'];
    steps.forEach((type, step) => {
      events.push({
        id: crypto.randomUUID(),
        type,
        apiVersion: '2026-10-15',
        // Microseconds, as the service writes them: compared as instants, not as text.
        occurredAt: new Date(start + i * 10_000 + step * 1000).toISOString().replace('Z', '123Z'),
        organizationId: '00000000-0000-4000-8000-000000000001',
        data: { leaveRequestId, employeeId: `employee-${i}`, status: type.slice('leave.'.length) },
      });
    });
  }
  return events;
}

/** The state an event applies: the last word of its type. */
export const stateOf = (event: WorkforceEvent): string => event.type.slice('leave.'.length);

/**
 * Sends `total` deliveries through the mock service's sender: every event at least once, the rest redeliveries
 * of random events, all shuffled, each to one of `urls` at random; resolves when every one was answered 2xx.
 */
export async function deliverShuffled(
  events: readonly WorkforceEvent[],
  urls: readonly string[],
  secret: string,
  total = 1000,
): Promise<void> {
  const plan = [...events];
  while (plan.length < total) plan.push(events[Math.floor(Math.random() * events.length)]!);
  for (let i = plan.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [plan[i], plan[j]] = [plan[j]!, plan[i]!];
  }
  const subscriptions: Subscription[] = urls.map((url, i) => ({
    id: `sub-${i}`,
    url,
    secret,
    events: 'all',
  }));
  // Retries (a 409 while a copy is claimed elsewhere) come back quickly instead of after minutes.
  const sender = createSender({ retryScheduleMs: [50, 100, 200, 400, 800, 1600] });
  // One batch, reversed by the sender: the plan's shuffle is the order that matters.
  const firsts = await Promise.all(
    plan.map((event) =>
      sender.deliver(event, [subscriptions[Math.floor(Math.random() * subscriptions.length)]!], {
        reorder: true,
      }),
    ),
  );
  await sender.settled();
  sender.close();
  expect(firsts.flat()).toHaveLength(total);
  const delivered = new Set(sender.attempts.filter((a) => a.ok).map((a) => a.eventId));
  expect(delivered.size).toBe(events.length);
}

/**
 * Checks the guarantees on the records: per key never two runs at once; never older over newer, on every record and
 * not only in its final state (each run starts on an event newer than every earlier run of its record; an event older
 * by then is skipped as stale); each event run at most once and, when not run, counted stale once; the final state of
 * every request is its newest event's. For scenarios whose handlers never fail: each run that started was handled.
 */
export function checkOrdering(
  events: readonly WorkforceEvent[],
  log: readonly RunRecord[],
  staleCounts: ReadonlyMap<string, number>,
  finalStates: ReadonlyMap<string, string>,
): void {
  const running = new Map<string, string>();
  const runs = new Map<string, number>();
  // The events' instants: a record's events are a second apart, so no two of them tie.
  const occurredAt = new Map(events.map((event) => [event.id, Date.parse(event.occurredAt)]));
  const newestRun = new Map<string, number>();
  for (const record of log) {
    if (record.kind === 'start') {
      expect(running.get(record.key), `two runs at once for ${record.key}`).toBeUndefined();
      const at = occurredAt.get(record.eventId);
      expect(at, `${record.eventId} is not one of the scenario's events`).toBeDefined();
      expect(at, `${record.eventId} ran after a newer event of ${record.key}`).toBeGreaterThan(
        newestRun.get(record.key) ?? Number.NEGATIVE_INFINITY,
      );
      newestRun.set(record.key, at!);
      running.set(record.key, record.eventId);
      runs.set(record.eventId, (runs.get(record.eventId) ?? 0) + 1);
    } else {
      expect(running.get(record.key)).toBe(record.eventId);
      running.delete(record.key);
    }
  }
  const newest = new Map<string, WorkforceEvent>();
  for (const event of events) {
    const key = event.data.leaveRequestId as string;
    const seen = newest.get(key);
    if (seen === undefined || seen.occurredAt < event.occurredAt) newest.set(key, event);
    const ran = runs.get(event.id) ?? 0;
    expect(ran, `event ${event.id} ran ${ran} times`).toBeLessThanOrEqual(1);
    expect(ran + (staleCounts.get(event.id) ?? 0), `event ${event.id}: run or counted stale once`).toBe(1);
  }
  for (const [key, event] of newest) expect(finalStates.get(key), key).toBe(stateOf(event));
}
