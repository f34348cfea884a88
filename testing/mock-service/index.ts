// createMockService: a local Workforce Service on loopback, its read API over fixtures and its webhook sender.
import type { AddressInfo } from 'node:net';
import { refusedPort } from '../../api/bad-port.js';
import { isCalendarDate } from '../../api/dates.js';
import { CURRENT_API_VERSION } from '../../src/envelope.js';
import type { WorkforceEvent } from '../../src/types.js';
import { createApiServer } from './api-server.js';
import { createEventClock } from './event-clock.js';
import { createFixtures, FIXTURE_KEYS } from './fixtures.js';
import { mockId } from './rules.js';
import {
  createSender,
  type DeliveryAttempt,
  type DeliveryFaults,
  type SenderOptions,
  type Subscription,
} from './sender.js';
import type { MockState } from './state.js';
import type { LeaveRequestInput } from './triggers.js';
import * as triggers from './triggers.js';
import { hasCredentials, redactUrl } from './url.js';

/** Options of `createMockService`. */
export interface MockServiceOptions extends SenderOptions {
  /** Port of the read API; default 0 (a free one). It listens on 127.0.0.1. */
  readonly port?: number;
  /** The mock's today, a real day written `YYYY-MM-DD`; default the day of `now` in UTC. The fixtures are built around it. */
  readonly today?: string;
  /**
   * The clock of the rate limit and of event times, in milliseconds like `Date.now`. Two events never share a time:
   * one that would (a fixed clock, one tick) gets a millisecond more than the last, so a record's events order. A
   * call also leaves the rate limit's minute once a minute has passed in real time, so a clock held still does not
   * refuse every call after the limit for ever.
   */
  readonly now?: () => number;
  /** Requests per key per minute, above 0; default 300 (spec "Limits"). */
  readonly rateLimit?: number;
}

/** What a state change sent: the event and the first attempt to each subscription. */
export interface Emission {
  readonly event: WorkforceEvent;
  readonly attempts: readonly DeliveryAttempt[];
}

/** Per-emission options. */
export interface EmitOptions {
  readonly faults?: DeliveryFaults;
}

/** A running mock service. */
export interface MockService {
  /** The spec's `{base_url}`: give it to `createApiClient`. */
  readonly baseUrl: string;
  /** Keys of the main organisation (`full`, `leave`, `attendance`, `people`) and of another one. */
  readonly apiKeys: typeof FIXTURE_KEYS;
  readonly organizationId: string;
  /** The data behind the API; read it to pick ids for tests. */
  readonly state: MockState;
  /**
   * Adds a webhook endpoint (at most 10 per organisation); the secret defaults to a fresh `whsec_...`. It belongs to
   * `organizationId` (default the main one, `mock.organizationId`) and gets that organisation's events only: every
   * one, or with `events` the types listed (a list of at least one).
   */
  subscribe(
    url: string,
    options?: {
      readonly secret?: string;
      readonly events?: readonly string[];
      readonly organizationId?: string;
    },
  ): Subscription;
  /**
   * Removes an endpoint; true when there was one. It gets nothing more: retries of its failed deliveries are dropped
   * (an attempt waiting for its answer ends as it would, without a retry), so `settled()` no longer waits for them.
   */
  unsubscribe(id: string): boolean;
  /**
   * Sends any event to every subscription that chose it (`webhook.test`, the Test action's, to every one); rejects
   * with a TypeError, before anything is sent, a type that is not printable ASCII without spaces (it is a header) and
   * data that is not an object.
   */
  emit(type: string, data: Record<string, unknown>, options?: EmitOptions): Promise<Emission>;
  /** The settings page's Test action: a `webhook.test` event, to every endpoint whatever events it selected. */
  sendTest(options?: EmitOptions): Promise<Emission>;
  /** An employee asks for leave: a Submitted request, and `leave.requested`. */
  requestLeave(input: LeaveRequestInput, options?: EmitOptions): Promise<Emission>;
  approveLeave(id: string, options?: EmitOptions): Promise<Emission>;
  rejectLeave(id: string, options?: EmitOptions): Promise<Emission>;
  /** Withdraws a request awaiting a decision or already approved (status Abandoned): `leave.cancelled`. */
  cancelLeave(id: string, options?: EmitOptions): Promise<Emission>;
  /** Approves a pending exception, makes the records of its days Excused: `attendance.exception.approved`. */
  approveException(id: string, options?: EmitOptions): Promise<Emission>;
  /**
   * Runs the absence report of a day (default today; a later day is refused, as it has not happened) and sends
   * `attendance.absence_report.completed`.
   */
  completeAbsenceReport(date?: string, options?: EmitOptions): Promise<Emission>;
  /** Every delivery attempt so far, retries included. */
  readonly deliveries: readonly DeliveryAttempt[];
  /** Resolves when no delivery is in flight or waiting for a retry. */
  settled(): Promise<void>;
  /** Stops the read API and the sender: scheduled retries are dropped, deliveries in flight stopped (`cancelled`). */
  close(): Promise<void>;
}

/**
 * Starts a local Workforce Service: the read API on loopback over fixture data, and a sender of signed deliveries.
 * @example
 * const mock = await createMockService();
 * const { secret } = mock.subscribe('http://127.0.0.1:3000/webhooks/workforce');
 * const api = createApiClient({ apiKey: mock.apiKeys.full, baseUrl: mock.baseUrl });
 * await mock.approveLeave(mock.state.leaveRequests.find((r) => r.statusId === 0)!.id);
 */
export async function createMockService(options: MockServiceOptions = {}): Promise<MockService> {
  const { port = 0, now = Date.now, rateLimit = 300, ...rest } = options;
  const { today = new Date(now()).toISOString().slice(0, 10), ...senderOptions } = rest;
  if (!isCalendarDate(today)) {
    throw new Error(
      `workforce-webhooks mock: today ${JSON.stringify(today)} is not a real day written YYYY-MM-DD`,
    );
  }
  const state = createFixtures(today);
  const organizationId = mockId(0, 1);
  // Both check their options before anything listens: a refused option leaves no server behind.
  const sender = createSender(senderOptions);
  const server = createApiServer({ state, rateLimit, now, today: () => today });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const subscriptions: Subscription[] = [];

  const eventTime = createEventClock(now);
  // An event names the organisation of its record (an employee of the second one gets that one's id).
  const emit = async (
    type: string,
    data: Record<string, unknown>,
    { faults }: EmitOptions = {},
    organization: string = organizationId,
    occurredAt: string = eventTime(),
  ): Promise<Emission> => {
    const event = {
      id: crypto.randomUUID(),
      type,
      apiVersion: CURRENT_API_VERSION,
      occurredAt,
      organizationId: organization,
      data,
    } as WorkforceEvent;
    // An endpoint belongs to one organisation and hears only of its events (spec: each key, and each endpoint set
    // in an organisation's settings, reaches only its own organisation).
    const own = subscriptions.filter((s) => (s.organizationId ?? organizationId) === event.organizationId);
    return { event, attempts: await sender.deliver(event, own, faults) };
  };
  // The change and its event carry one time: a record's requestedOn or approvedAt is its event's occurredAt.
  const emitChange = (
    change: (at: string) => triggers.Change,
    options: EmitOptions | undefined,
  ): Promise<Emission> => {
    const at = eventTime();
    const { type, data, organizationId: organization } = change(at);
    return emit(type, data, options, organization, at);
  };

  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    apiKeys: FIXTURE_KEYS,
    organizationId,
    state,
    subscribe(
      url,
      {
        secret = `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString('base64url')}`,
        events,
        organizationId: owner = organizationId,
      } = {},
    ) {
      // An endpoint of an organisation the fixtures lack would hear of nothing, silently (a mistyped id, say).
      if (!state.organizations.some((o) => o.id === owner))
        throw new Error(
          `workforce-webhooks mock: no organisation ${JSON.stringify(owner)} in the mock; give mock.organizationId (the default) or another of mock.state.organizations`,
        );
      // Spec "Subscription": at most 10 endpoints. Unlike the service, the mock sends to http and loopback.
      if (subscriptions.filter((s) => s.organizationId === owner).length >= 10)
        throw new Error('workforce-webhooks mock: an organisation has at most 10 endpoints');
      // A URL fetch cannot parse would fail every delivery, each one blamed on the endpoint: said here instead.
      const parsed = URL.canParse(url) ? new URL(url) : undefined;
      if (parsed?.protocol !== 'http:' && parsed?.protocol !== 'https:')
        throw new Error(`workforce-webhooks mock: ${redactUrl(url)} is not an http(s) URL`);
      // fetch refuses such a URL, so every delivery would fail; the service sends no credentials but the signature.
      if (hasCredentials(parsed))
        throw new Error(
          `workforce-webhooks mock: ${redactUrl(url)} carries a user name or password; give it without`,
        );
      // Every delivery to a port fetch refuses would fail with a bare "bad port": said here, with the fix.
      const refused = refusedPort(parsed);
      if (refused !== undefined)
        throw new Error(`workforce-webhooks mock: ${redactUrl(url)}: ${refused}; use another port`);
      // Nothing can be signed with an empty secret (a variable read from an unset environment, say): said here, not
      // by each delivery to the endpoint failing before it is sent.
      if (typeof secret !== 'string' || secret === '')
        throw new Error(
          'workforce-webhooks mock: secret must be a non-empty string, the secret your endpoint verifies with; leave it out for a new one',
        );
      // Spec "Subscription": Every event, or the Selected events chosen. A choice of none would hear of nothing, and
      // a type given alone would be matched by substring (`includes` on a string).
      if (
        events !== undefined &&
        (!Array.isArray(events) ||
          events.length === 0 ||
          !events.every((type) => typeof type === 'string' && type !== ''))
      )
        throw new Error(
          "workforce-webhooks mock: events must list the event types the endpoint chose, e.g. ['leave.approved']; leave it out for every event",
        );
      const subscription: Subscription = {
        id: crypto.randomUUID(),
        url,
        secret,
        events: events ?? 'all',
        organizationId: owner,
      };
      subscriptions.push(subscription);
      return subscription;
    },
    unsubscribe(id) {
      const index = subscriptions.findIndex((s) => s.id === id);
      if (index === -1) return false;
      subscriptions.splice(index, 1);
      sender.forget(id);
      return true;
    },
    async emit(type, data, options) {
      // Sent as the Svc-Event-Type header: a type no header can carry (a newline, a space, a non-ASCII letter) would
      // fail every attempt with a TypeError blamed on the endpoint, and be retried for two days.
      if (typeof type !== 'string' || !/^[\x21-\x7e]+$/.test(type))
        throw new TypeError(
          `workforce-webhooks mock: the event type must be printable ASCII without spaces (it is sent as the Svc-Event-Type header), got ${JSON.stringify(type)}; give a type such as 'leave.approved'`,
        );
      // Spec "Delivery format": data is an object; any other would be refused by every receiver, and retried.
      if (typeof data !== 'object' || data === null || Array.isArray(data))
        throw new TypeError(
          `workforce-webhooks mock: the event data must be an object (spec "Delivery format"), got ${Array.isArray(data) ? 'an array' : String(data)}; give {} for none`,
        );
      return emit(type, data, options);
    },
    sendTest: (options) => emit('webhook.test', {}, options),
    requestLeave: async (input, options) =>
      emitChange((at) => triggers.requestLeave(state, input, at), options),
    approveLeave: async (id, options) => emitChange(() => triggers.approveLeave(state, id), options),
    rejectLeave: async (id, options) => emitChange(() => triggers.rejectLeave(state, id), options),
    cancelLeave: async (id, options) => emitChange(() => triggers.cancelLeave(state, id), options),
    approveException: async (id, options) =>
      emitChange((at) => triggers.approveException(state, id, at), options),
    completeAbsenceReport: async (date = today, options) =>
      emitChange((at) => triggers.completeAbsenceReport(state, organizationId, date, at, today), options),
    deliveries: sender.attempts,
    settled: () => sender.settled(),
    async close() {
      await sender.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type { DeliveryAttempt, DeliveryFaults, Subscription } from './sender.js';
export { DEFAULT_RETRY_SCHEDULE_MS } from './sender.js';
export type { MockState } from './state.js';
export type { LeaveRequestInput } from './triggers.js';
