// Capacity in interleaved blocks: a raw-socket client sends short blocks of deliveries to each server in turn and
// reads each server's CPU time around its blocks, so that drift on the machine reaches every server alike.
import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { eventTemplate, githubHeaders, svcHeaders } from './fixtures.js';
import type { LoadResult } from './load.js';
import { median, quantile } from './median.js';
import { PATH } from './servers/common.js';

/** A running server to measure: where it listens, how it signs, and its CPU time so far. */
export interface BlockTarget {
  readonly port: number;
  readonly scheme: 'svc' | 'github';
  cpuMicros(): number;
  /** Resolves once the server has processed the `sent` deliveries it was sent so far, so the block's CPU covers it. */
  settle?(sent: number): Promise<void>;
}

/** Options of `interleave`. */
export interface BlockOptions {
  /** Blocks per server; each step sends one block to every server, in an order that rotates. */
  readonly steps: number;
  /** Deliveries per block. */
  readonly size: number;
  /** Connections per server, each with one request in flight (keep-alive, no pipelining). */
  readonly connections: number;
}

/** What `interleave` measured, per server: CPU µs per delivery for each step, and answers that were not 2xx. */
export interface BlockResult {
  readonly cpuPerRequest: readonly number[];
  readonly failures: number;
}

const template = eventTemplate(1024);

// One signed delivery as the bytes of an HTTP/1.1 request, built before its block starts so that the client's
// signing is never inside a measured window.
function delivery(scheme: 'svc' | 'github'): Buffer {
  const id = randomUUID();
  const body = template.fill(id);
  const headers = scheme === 'svc' ? svcHeaders(body, id) : githubHeaders(body);
  let head = `POST ${PATH} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: ${Buffer.byteLength(body)}\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  return Buffer.from(`${head}\r\n${body}`);
}

// The length of the first complete answer in `text` (latin1), or 0 while it is still arriving. Answers carry a
// content-length or are chunked.
function answerLength(text: string): number {
  const headEnd = text.indexOf('\r\n\r\n');
  if (headEnd === -1) return 0;
  const head = text.slice(0, headEnd).toLowerCase();
  const length = /\r\ncontent-length: *(\d+)/.exec(head);
  if (length !== null) {
    const total = headEnd + 4 + Number(length[1]);
    return text.length >= total ? total : 0;
  }
  const end = text.indexOf('\r\n0\r\n\r\n', headEnd);
  return end === -1 ? 0 : end + 7;
}

class Connection {
  readonly #socket: Socket;
  #pending = '';
  #onAnswer: ((ok: boolean) => void) | undefined;

  constructor(socket: Socket) {
    this.#socket = socket;
    socket.setNoDelay(true);
    // A server that closes a connection fails its request instead of leaving the block waiting forever.
    socket.on('close', () => {
      const onAnswer = this.#onAnswer;
      this.#onAnswer = undefined;
      onAnswer?.(false);
    });
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      this.#pending += chunk.toString('latin1');
      for (let length = answerLength(this.#pending); length > 0; length = answerLength(this.#pending)) {
        const ok = this.#pending.startsWith('HTTP/1.1 2');
        this.#pending = this.#pending.slice(length);
        const onAnswer = this.#onAnswer;
        this.#onAnswer = undefined;
        onAnswer?.(ok);
      }
    });
  }

  static open(port: number): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new Connection(socket)));
      socket.once('error', reject);
    });
  }

  send(request: Buffer, onAnswer: (ok: boolean) => void): void {
    if (this.#socket.destroyed) throw new Error('bench: the server closed a connection');
    this.#onAnswer = onAnswer;
    this.#socket.write(request);
  }

  close(): void {
    this.#socket.destroy();
  }
}

// Sends every request of a block over the pool, one in flight per connection; resolves with the failures.
function sendBlock(pool: readonly Connection[], requests: readonly Buffer[]): Promise<number> {
  return new Promise((resolve) => {
    let next = 0;
    let answered = 0;
    let failures = 0;
    const sendNext = (connection: Connection): void => {
      const request = requests[next++]!;
      connection.send(request, (ok) => {
        if (!ok) failures++;
        if (++answered === requests.length) resolve(failures);
        else if (next < requests.length) sendNext(connection);
      });
    };
    for (const connection of pool) if (next < requests.length) sendNext(connection);
  });
}

/**
 * Measures each server's CPU per delivery over `steps` blocks each, taken in turns, after one block each to warm
 * the connections.
 * @example
 * const [base, ours] = await interleave([baseline, pkg], { steps: 40, size: 1000, connections: 10 });
 */
export async function interleave(
  targets: readonly BlockTarget[],
  { steps, size, connections }: BlockOptions,
): Promise<BlockResult[]> {
  const pools = await Promise.all(
    targets.map((t) => Promise.all(Array.from({ length: connections }, () => Connection.open(t.port)))),
  );
  try {
    const cpu = targets.map((): number[] => []);
    const failures = targets.map(() => 0);
    const sent = targets.map(() => 0);
    for (let step = -1; step < steps; step++) {
      // Rotate who goes first, so no server always follows the same one.
      const order = targets.map((_, i) => (i + Math.max(step, 0)) % targets.length);
      for (const i of order) {
        const target = targets[i]!;
        const requests = Array.from({ length: size }, () => delivery(target.scheme));
        const before = target.cpuMicros();
        const failed = await sendBlock(pools[i]!, requests);
        sent[i]! += size;
        await target.settle?.(sent[i]!);
        const used = target.cpuMicros() - before;
        if (step >= 0) {
          cpu[i]!.push(used / size);
          failures[i]! += failed;
        }
      }
    }
    return targets.map((_, i) => ({ cpuPerRequest: cpu[i]!, failures: failures[i]! }));
  } finally {
    for (const pool of pools) for (const connection of pool) connection.close();
  }
}

/** What `spread` measured: answers within the window, those that were not 2xx, and each answer's latency. */
export interface SpreadResult {
  readonly answered: number;
  readonly failures: number;
  readonly latenciesMs: readonly number[];
}

/**
 * Keeps `connections` connections busy for `seconds`, dealt round-robin over `ports` (one request in flight on
 * each, a fresh delivery every time): the scale-out section's client in front of several instances.
 * @example
 * const { answered } = await spread([portA, portB], { seconds: 5, connections: 12 });
 */
export async function spread(
  ports: readonly number[],
  { seconds, connections }: { readonly seconds: number; readonly connections: number },
): Promise<SpreadResult> {
  const pool = await Promise.all(
    Array.from({ length: connections }, (_, i) => Connection.open(ports[i % ports.length]!)),
  );
  const latenciesMs: number[] = [];
  let failures = 0;
  const end = performance.now() + seconds * 1000;
  try {
    await Promise.all(
      pool.map(
        (connection) =>
          new Promise<void>((resolve) => {
            const next = (): void => {
              if (performance.now() >= end) {
                resolve();
                return;
              }
              const start = performance.now();
              connection.send(delivery('svc'), (ok) => {
                if (!ok) failures++;
                latenciesMs.push(performance.now() - start);
                next();
              });
            };
            next();
          }),
      ),
    );
  } finally {
    for (const connection of pool) connection.close();
  }
  return { answered: latenciesMs.length, failures, latenciesMs };
}

/** One server's round: autocannon's throughput and latency, and the CPU per delivery of each of its blocks. */
export type Run = LoadResult & { readonly blocks: readonly number[]; readonly blockFailures: number };

/** A server's rounds in one row: the medians of their autocannon figures and of every block's CPU. */
export interface RunSummary {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly cpu: number;
  readonly failures: number;
}

/**
 * The medians of `runs`, and every failure counted.
 * @example
 * const { cpu, p99 } = summarize(runs.get('node:baseline') ?? []);
 */
export function summarize(runs: readonly Run[]): RunSummary {
  return {
    rps: median(runs.map((r) => r.requestsPerSecond)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    cpu: median(runs.flatMap((r) => r.blocks)),
    failures: runs.reduce((sum, r) => sum + r.failures + r.blockFailures, 0),
  };
}

/**
 * Capacity of `ours` against `theirs`, block by block: the two blocks of a step ran back to back, so a slow moment
 * on the machine hits both. The median of those ratios over every round, and the middle half of them.
 * @example
 * const { value, low, high } = pairedCapacity(runs.package, runs.baseline);
 */
export function pairedCapacity(
  ours: readonly Run[],
  theirs: readonly Run[],
): { readonly value: number; readonly low: number; readonly high: number } {
  const against = theirs.flatMap((r) => r.blocks);
  const ratios = ours.flatMap((r) => r.blocks).map((cpu, i) => (against[i] ?? Number.NaN) / cpu);
  return { value: median(ratios), low: quantile(ratios, 0.25), high: quantile(ratios, 0.75) };
}
