// The test kit users import in their own tests: signed deliveries exactly as the service sends them.
import { CURRENT_API_VERSION } from '../src/envelope.js';
import { type Secret, signPayload } from '../src/signature.js';
import type { EventDataMap, UnknownEventData, WorkforceEvent } from '../src/types.js';
import { createEventClock } from './mock-service/event-clock.js';
import { type SampleData, sampleEventData } from './samples.js';

export { signPayload } from '../src/signature.js';
export { SAMPLE_IDS, type SampleData, type SampleOptions, sampleEventData } from './samples.js';

// The data the app's map gives the type: what a delivery carries when the test gives it.
type MappedData<T extends string> = T extends keyof EventDataMap ? EventDataMap[T] : UnknownEventData;

/** Options of `createSignedDelivery`. */
export interface SignedDeliveryOptions<T extends string> {
  readonly secret: Secret;
  readonly type: T;
  /** Default: a realistic sample of the type (`sampleEventData(type)`), and `event.data` typed as that sample. */
  readonly data?: MappedData<T>;
  /** Event id; default a random uuid. Reuse one to simulate a redelivery. */
  readonly id?: string;
  /** Signature `t`, unix seconds; default now. */
  readonly timestamp?: number;
  /** Default now, ISO 8601 UTC, and later than the default of the delivery made before (never a tie). */
  readonly occurredAt?: string;
  readonly organizationId?: string;
  readonly apiVersion?: string;
  /** `Svc-Delivery-Id`; default a random uuid (every delivery has its own). */
  readonly deliveryId?: string;
}

/** A signed delivery: the exact body text, the headers the service sends, and the event it carries (its data `D`). */
export interface SignedDelivery<T extends string, D = MappedData<T>> {
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly event: WorkforceEvent<T, D>;
  /** A `POST` `Request` to `url` carrying this delivery. */
  toRequest(url: string | URL): Request;
}

// Default event times: deliveries made one after the other (approved, then cancelled) fall in the same millisecond,
// and a receiver ordering a record's events breaks a tie by the random event id (spec rule 4): the later one would be
// skipped as older half of the time. Each default is a millisecond past the last, as the mock's events are.
const eventTime = createEventClock(Date.now);

/** The organisation id the test kit uses when none is given. */
export const TEST_ORGANIZATION_ID = '00000000-0000-4000-8000-000000000001';

/**
 * Builds a delivery signed like the Workforce Service's, for supertest, `fetch` or `receiver.handle`; without
 * `data`, the type's realistic sample, and `event.data` typed as the sample (`SampleData<T>`), not as the fields the
 * app gave the type in `EventDataMap`, which the sample does not have.
 * @example
 * const delivery = await createSignedDelivery({ secret: 'whsec_test', type: 'leave.approved', data });
 * await request(app).post('/webhooks/workforce').set(delivery.headers).send(delivery.body).expect(202);
 */
export function createSignedDelivery<T extends string>(
  options: SignedDeliveryOptions<T> & { readonly data: MappedData<T> },
): Promise<SignedDelivery<T>>;
// Without data: the sample's.
export function createSignedDelivery<T extends string>(
  options: SignedDeliveryOptions<T> & { readonly data?: undefined },
): Promise<SignedDelivery<T, SampleData<T>>>;
// Data that may or may not be there (options built elsewhere): either.
export function createSignedDelivery<T extends string>(
  options: SignedDeliveryOptions<T>,
): Promise<SignedDelivery<T, MappedData<T> | SampleData<T>>>;
export async function createSignedDelivery<T extends string>(
  options: SignedDeliveryOptions<T>,
): Promise<SignedDelivery<T, MappedData<T> | SampleData<T>>> {
  const {
    secret,
    type,
    // A handler written for the type's fields gets them, rather than `{}` and a TypeError in the background.
    data = sampleEventData(type),
    id = crypto.randomUUID(),
    timestamp = Math.floor(Date.now() / 1000),
    occurredAt = eventTime(),
    organizationId = TEST_ORGANIZATION_ID,
    apiVersion = CURRENT_API_VERSION,
    deliveryId = crypto.randomUUID(),
  } = options;
  const event: WorkforceEvent<T, MappedData<T> | SampleData<T>> = {
    id,
    type,
    apiVersion,
    occurredAt,
    organizationId,
    data,
  };
  const body = JSON.stringify(event);
  const headers = {
    'content-type': 'application/json; charset=utf-8',
    'user-agent': 'Svc-Webhooks/1.0',
    'svc-event-id': id,
    'svc-event-type': type,
    'svc-delivery-id': deliveryId,
    'svc-signature': await signPayload({ payload: body, secret, timestamp }),
  };
  return {
    body,
    headers,
    event,
    toRequest: (url) => new Request(url, { method: 'POST', headers, body }),
  };
}

export {
  createMockService,
  DEFAULT_RETRY_SCHEDULE_MS,
  type DeliveryAttempt,
  type DeliveryFaults,
  type Emission,
  type EmitOptions,
  type MockService,
  type MockServiceOptions,
  type MockState,
  type Subscription,
} from './mock-service/index.js';
