// The adapter contract: one scenario table (DESIGN.md's status table) driven through any adapter over real HTTP.

import { describe, it, onTestFinished } from 'vitest';
import { createMemoryQueue, createReceiver, type Receiver, type ReceiverOptions } from 'workforce-webhooks';
import { dedupeScenarios } from './adapter-dedupe.js';
import { inlineScenarios } from './adapter-inline.js';
import { queueScenarios } from './adapter-queue.js';
import { verificationScenarios } from './adapter-verification.js';

/**
 * A receiver mounted in a real app listening on loopback.
 * @example
 * const app: MountedApp = await listen(http.createServer(createNodeHandler(receiver)));
 */
export interface MountedApp {
  /** The full webhook URL, e.g. `http://127.0.0.1:PORT/webhooks/workforce`. */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Mounts a receiver with the adapter under test and starts listening on a free loopback port.
 * @example
 * const mount: Mount = async (receiver) => listen(createServer(createNodeHandler(receiver)));
 */
export type Mount = (receiver: Receiver) => Promise<MountedApp>;

/** The secret every contract receiver verifies with. */
export const CONTRACT_SECRET = 'whsec_contract_MfKQ9r3bXyZ2tLp8VnWc';

/**
 * A receiver with the contract's secret that records the `leave.approved` ids it handled; closed after the test.
 * @example
 * const { receiver, seen } = watchedReceiver({ logger });
 */
export function watchedReceiver(options: Partial<ReceiverOptions> = {}): {
  readonly receiver: Receiver;
  readonly seen: string[];
} {
  const receiver = createReceiver({ secret: CONTRACT_SECRET, ...options });
  const seen: string[] = [];
  receiver.on('leave.approved', (event) => {
    seen.push(event.id);
  });
  onTestFinished(() => receiver.close());
  return { receiver, seen };
}

/**
 * What each scenario module gets: a named test and a fresh receiver mounted for that test.
 * @example
 * scenario('GET', async () => { const { url } = await open(); ... });
 */
export interface ContractContext {
  scenario(name: ScenarioName, test: () => Promise<void>): void;
  /** A new receiver (memory queue: 3 attempts, 1 ms backoff, unless `queue` is given), mounted; closed after the test. */
  open(options?: Partial<ReceiverOptions>): Promise<{ readonly receiver: Receiver; readonly url: string }>;
}

/** Every scenario of the contract, by the name `skip` takes. */
export const SCENARIOS = [
  'valid delivery',
  'same delivery again',
  'redelivery with a new delivery id',
  '10 concurrent copies',
  'forged signature',
  'missing signature',
  'stale signature',
  'future signature',
  'garbled signature',
  'invalid JSON under a valid signature',
  'Svc-Event-Id differs from the body',
  'unknown type',
  '2 MiB body',
  '2 MiB body in chunks, with no length declared',
  'GET',
  'handler throws',
  'queue full',
  'close under load',
  'slow handler',
  'inline success',
  'inline handler throws',
  'inline past the ack deadline',
  'inline duplicate while running',
] as const;

/** The name of one scenario of the contract. */
export type ScenarioName = (typeof SCENARIOS)[number];

/**
 * Registers the adapter contract for one adapter: every scenario builds its own receiver, mounts it with `mount`
 * and sends real HTTP over loopback. Every answer of every scenario is also checked to be no 3xx and to carry no
 * handler's error message (`send` in adapter-client.ts).
 * @example
 * describeAdapterContract('node:http', (receiver) => listen(http.createServer(createNodeHandler(receiver))));
 */
export function describeAdapterContract(
  name: string,
  mount: Mount,
  options: { readonly skip?: readonly string[] } = {},
): void {
  const { skip = [] } = options;
  const unknown = skip.filter((s) => !(SCENARIOS as readonly string[]).includes(s));
  // A misspelt skip would silently run nothing less; say so instead.
  if (unknown.length > 0)
    throw new Error(`describeAdapterContract: unknown scenarios in skip: ${unknown.join(', ')}`);

  const context: ContractContext = {
    scenario(scenarioName, test) {
      (skip.includes(scenarioName) ? it.skip : it)(scenarioName, test);
    },
    async open(receiverOptions = {}) {
      const receiver = createReceiver({
        secret: CONTRACT_SECRET,
        queue: createMemoryQueue({ attempts: 3, backoff: () => 1 }),
        ...receiverOptions,
      });
      const app = await mount(receiver);
      onTestFinished(async () => {
        // The receiver first: it aborts inline runs still in flight, so the server has no open request to wait on.
        await receiver.close({ timeoutMs: 200 });
        await app.close();
      });
      return { receiver, url: app.url };
    },
  };

  describe(`${name} adapter contract`, () => {
    dedupeScenarios(context);
    verificationScenarios(context);
    queueScenarios(context);
    inlineScenarios(context);
  });
}
