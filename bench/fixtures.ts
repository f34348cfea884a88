// Realistic signed deliveries for the benchmarks: nested JSON envelopes of a chosen size, signed per scheme.
import { createHmac, randomUUID } from 'node:crypto';

/** The endpoint secret every benchmark server and client shares (svix-style base64 after `whsec_`). */
export const SECRET = 'whsec_MfKQ9r8GKYqrTz4qXbE3kDxLHn6pTQ2v';

/** The event type the benchmark servers register a handler for. */
export const EVENT_TYPE = 'attendance.absence_report.completed';

const ID_SLOT = '00000000-0000-4000-8000-00000000face';

/** An event body split around its id, so a client can stamp a fresh id on every request without re-serialising. */
export interface BodyTemplate {
  readonly before: string;
  readonly after: string;
  readonly bytes: number;
  /** The body with `id` in place. */
  fill(id: string): string;
}

function attendanceRecord(i: number): Record<string, unknown> {
  const day = String((i % 28) + 1).padStart(2, '0');
  return {
    id: `6f1c2b8e-${String(i).padStart(4, '0')}-4a51-9d3e-2c7b5e9f0a14`,
    employeeId: `a3d9e7c1-${String(i).padStart(4, '0')}-4b2f-8e6a-1f0c3d5b7e92`,
    firstName: ['Amara', 'Bola', 'Chidi', 'Dayo'][i % 4],
    lastName: ['Okafor', 'Adeyemi', 'Eze', 'Balogun'][i % 4],
    email: `employee${i}@example.com`,
    department: ['Engineering', 'Finance', 'Operations'][i % 3],
    role: ['Engineer', 'Analyst', 'Manager'][i % 3],
    company: { id: '0b7e4a2d-5c91-4f3e-a8d6-7e2f9c1b4a63', name: 'Acme Nigeria Ltd' },
    attendanceDate: `2026-10-${day}`,
    applicableDay: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'][i % 5],
    trackingMethod: 'ClockInClockOut',
    clockInTime: `08:${String(i % 60).padStart(2, '0')}:00`,
    clockOutTime: '17:05:00',
    status: ['Present', 'Late', 'Excused'][i % 3],
    totalWorkedHours: 8.5 + (i % 4) / 4,
    workmode: ['Remote', 'Onsite', 'Hybrid'][i % 3],
    needsReview: i % 7 === 0,
  };
}

/**
 * Builds an `attendance.absence_report.completed` envelope with nested records until it reaches `bytes`.
 * @example
 * const template = eventTemplate(1024); const body = template.fill(randomUUID());
 */
export function eventTemplate(bytes: number): BodyTemplate {
  const records: Record<string, unknown>[] = [];
  const event = {
    id: ID_SLOT,
    type: EVENT_TYPE,
    apiVersion: '2026-10-15',
    occurredAt: '2026-10-15T18:30:12.123Z',
    organizationId: '00000000-0000-4000-8000-000000000001',
    data: {
      reportId: '9a8b7c6d-5e4f-4a3b-9c2d-1e0f2a3b4c5d',
      reportDate: '2026-10-15',
      status: 'Completed',
      isWorkDay: true,
      counts: { present: 412, late: 23, absent: 7, leave: 18, holiday: 0, excused: 5 },
      records,
    },
  };
  let text = JSON.stringify(event);
  // Whole records until the next would overshoot; a short note pads the rest, so the size is near exact.
  for (let i = 0; ; i++) {
    const next = JSON.stringify(attendanceRecord(i));
    if (text.length + next.length + 1 > bytes) break;
    records.push(attendanceRecord(i));
    text = JSON.stringify(event);
  }
  const padding = Math.max(0, bytes - text.length - ',"note":""'.length);
  (event.data as Record<string, unknown>).note = 'x'.repeat(padding);
  text = JSON.stringify(event);
  const [before = '', after = ''] = text.split(ID_SLOT);
  return { before, after, bytes: text.length, fill: (id) => before + id + after };
}

/**
 * The `Svc-Signature` header for a body: what the Workforce Service sends.
 * @example
 * svcSignature(body, Math.floor(Date.now() / 1000))
 */
export function svcSignature(body: string | Uint8Array, t: number, secret: string = SECRET): string {
  const digest = createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
  return `t=${t},v1=${digest}`;
}

/**
 * Every header of one Workforce delivery of `body` (event id `id`), signed now.
 * @example
 * const headers = svcHeaders(body, id);
 */
export function svcHeaders(body: string, id: string): Record<string, string> {
  return {
    'content-type': 'application/json; charset=utf-8',
    'svc-event-id': id,
    'svc-event-type': EVENT_TYPE,
    'svc-delivery-id': randomUUID(),
    'svc-signature': svcSignature(body, Math.floor(Date.now() / 1000)),
  };
}

/**
 * The headers GitHub sends, for the Octokit middleware baseline (`X-Hub-Signature-256` over the body).
 * @example
 * const headers = githubHeaders(body);
 */
export function githubHeaders(body: string, secret: string = SECRET): Record<string, string> {
  return {
    'content-type': 'application/json',
    'x-github-event': 'push',
    'x-github-delivery': randomUUID(),
    'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
  };
}
