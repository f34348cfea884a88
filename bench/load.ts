// The load generator: autocannon sending 1 KB signed deliveries, each with a fresh event id and signature.
import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import { eventTemplate, githubHeaders, svcHeaders } from './fixtures.js';
import { PATH } from './servers/common.js';

/** Options of `load`. */
export interface LoadOptions {
  readonly port: number;
  readonly seconds: number;
  /** Signature scheme of the deliveries: the Workforce Service's, or GitHub's for the Octokit peer. */
  readonly scheme?: 'svc' | 'github';
  readonly bytes?: number;
  readonly connections?: number;
  /** Fixed request rate (requests per second over all connections); default as fast as the server answers. */
  readonly rate?: number;
}

/** What one load run measured. */
export interface LoadResult {
  readonly requestsPerSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly total: number;
  /** 2xx answers. */
  readonly accepted: number;
  /** Answers that were not 2xx, plus errors and timeouts: a valid run has none. */
  readonly failures: number;
}

/**
 * Sends signed POSTs to a benchmark server for `seconds` and reports throughput and latency.
 * @example
 * const result = await load({ port, seconds: 10 });
 */
export async function load({
  port,
  seconds,
  scheme = 'svc',
  bytes = 1024,
  connections = 10,
  rate,
}: LoadOptions): Promise<LoadResult> {
  const template = eventTemplate(bytes);
  // Every delivery is distinct (the realistic case): a duplicate would take the receiver's cheaper path.
  const setupRequest = (request: { method?: string; path?: string }) => {
    const id = randomUUID();
    const body = template.fill(id);
    const headers = scheme === 'svc' ? svcHeaders(body, id) : githubHeaders(body);
    return { ...request, body, headers };
  };
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    duration: seconds,
    ...(rate === undefined ? {} : { overallRate: rate }),
    requests: [{ method: 'POST', path: PATH, setupRequest }],
  });
  return {
    requestsPerSecond: result.requests.total / seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    accepted: Object.entries(result.statusCodeStats)
      .filter(([code]) => code.startsWith('2'))
      .reduce((sum, [, { count }]) => sum + count, 0),
    failures: result.non2xx + result.errors + result.timeouts,
  };
}
