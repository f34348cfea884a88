// A fixed-rate client: sends signed deliveries on a schedule and times each answer with sub-millisecond resolution.
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { eventTemplate, svcHeaders } from './fixtures.js';
import { PATH } from './servers/common.js';

/** What a paced run measured: answer latencies in ms and the status codes seen. */
export interface PacedResult {
  readonly latencies: readonly number[];
  readonly statuses: Readonly<Record<number, number>>;
}

function send(agent: Agent, port: number, body: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, port, host: '127.0.0.1', method: 'POST', path: PATH, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Sends `rate` deliveries a second for `seconds`, whatever the answers' speed (open model: a slow answer does
 * not delay the next request, so queueing shows up in the latency instead of being hidden).
 * @example
 * const { latencies } = await paced({ port, rate: 200, seconds: 10 });
 */
export async function paced({
  port,
  rate,
  seconds,
  bytes = 1024,
}: {
  port: number;
  rate: number;
  seconds: number;
  bytes?: number;
}): Promise<PacedResult> {
  const template = eventTemplate(bytes);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const latencies: number[] = [];
  const statuses: Record<number, number> = {};
  const inFlight: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const id = randomUUID();
    const body = template.fill(id);
    const headers = svcHeaders(body, id);
    const sent = performance.now();
    inFlight.push(
      send(agent, port, body, headers).then((status) => {
        latencies.push(performance.now() - sent);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }),
    );
  }
  await Promise.all(inFlight);
  agent.destroy();
  return { latencies, statuses };
}

/**
 * The `p`th percentile (0-100) of a list of numbers.
 * @example
 * percentile([1, 2, 3, 4], 50) // 2
 */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return (
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN
  );
}
