// Section 1: verify and verify-plus-parse on a Buffer, against the node:crypto floor and the peers' verifiers.
import { randomUUID } from 'node:crypto';
import { verify as octokitVerify } from '@octokit/webhooks-methods';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { Webhook as SvixWebhook } from 'svix';
import { Bench } from 'tinybench';
import { parseEvent, verifySignature } from 'workforce-webhooks';
import { EVENT_TYPE, eventTemplate, githubHeaders, SECRET, svcHeaders } from './fixtures.js';
import { floorVerify, floorVerifyAndParse } from './floor.js';
import { pick } from './options.js';
import { emit, ops, ratio, type Table, type Target } from './report.js';

const SIZES = [1024, 64 * 1024] as const;
const ROUNDS = pick(1, 3);
const stripe = new Stripe('sk_test_bench_only');
const svix = new SvixWebhook(SECRET);
const standard = new StandardWebhook(SECRET);

type Task = { readonly name: string; readonly fn: () => unknown; readonly floor: 'verify' | 'parse' };

// Every task gets the body as an adapter has it (a Buffer) and does what its users do with it.
function tasks(bytes: number): Task[] {
  const id = randomUUID();
  const text = eventTemplate(bytes).fill(id);
  const body = Buffer.from(text);
  const headers = svcHeaders(text, id);
  const header = headers['svc-signature']!;
  const msgId = `msg_${id}`;
  const now = new Date();
  const svixHeaders = {
    'svix-id': msgId,
    'svix-timestamp': String(Math.floor(now.getTime() / 1000)),
    'svix-signature': svix.sign(msgId, now, text),
  };
  const standardHeaders = {
    'webhook-id': msgId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': standard.sign(msgId, now, text),
  };
  const hubSignature = githubHeaders(text)['x-hub-signature-256']!;
  const mustParse = (event: { type?: string }): void => {
    if (event.type !== EVENT_TYPE) throw new Error('bench: parse gave the wrong event');
  };
  const mustBeTrue = (ok: boolean): void => {
    if (!ok) throw new Error('bench: a verifier refused a valid delivery');
  };
  return [
    {
      name: 'floor: node:crypto HMAC + timingSafeEqual',
      floor: 'verify',
      fn: () => mustBeTrue(floorVerify(body, header, SECRET)),
    },
    {
      name: 'floor + JSON.parse',
      floor: 'parse',
      fn: () => mustParse(floorVerifyAndParse(body, header, SECRET) as { type: string }),
    },
    {
      name: 'workforce-webhooks verifySignature',
      floor: 'verify',
      fn: () => verifySignature({ payload: body, header, secret: SECRET }),
    },
    {
      name: 'workforce-webhooks verify + parseEvent',
      floor: 'parse',
      fn: async () => {
        await verifySignature({ payload: body, header, secret: SECRET });
        mustParse(parseEvent(body, headers));
      },
    },
    {
      name: 'stripe signature.verifyHeader',
      floor: 'verify',
      fn: () => stripe.webhooks.signature!.verifyHeader(body, header, SECRET),
    },
    {
      name: 'stripe webhooks.constructEvent',
      floor: 'parse',
      fn: () => mustParse(stripe.webhooks.constructEvent(body, header, SECRET)),
    },
    {
      name: 'svix verify (verify + parse)',
      floor: 'parse',
      fn: () => mustParse(svix.verify(body, svixHeaders) as { type: string }),
    },
    {
      name: 'standardwebhooks verify (verify + parse)',
      floor: 'parse',
      fn: () => mustParse(standard.verify(body, standardHeaders) as { type: string }),
    },
    {
      name: '@octokit/webhooks-methods verify',
      floor: 'verify',
      fn: async () => mustBeTrue(await octokitVerify(SECRET, body.toString('utf8'), hubSignature)),
    },
  ];
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function measure(bytes: number): Promise<Map<string, { task: Task; opsPerSecond: number }>> {
  const samples = new Map<string, { task: Task; runs: number[] }>();
  for (let round = 0; round < ROUNDS; round++) {
    // Fresh signatures each round: the 300 s tolerance must hold while it runs.
    const bench = new Bench({ time: pick(250, 1000), warmupTime: pick(100, 250), throws: true });
    const list = tasks(bytes);
    for (const task of list) bench.add(task.name, task.fn);
    await bench.run();
    for (const [i, task] of list.entries()) {
      const result = bench.tasks[i]!.result;
      if (result.state !== 'completed')
        throw new Error(`bench: ${task.name} did not complete (${result.state})`);
      const entry = samples.get(task.name) ?? { task, runs: [] };
      entry.runs.push(result.throughput.p50);
      samples.set(task.name, entry);
    }
  }
  return new Map([...samples].map(([name, { task, runs }]) => [name, { task, opsPerSecond: median(runs) }]));
}

const tables: Table[] = [];
const targets: Target[] = [];
for (const bytes of SIZES) {
  const results = await measure(bytes);
  const floor = {
    verify: results.get('floor: node:crypto HMAC + timingSafeEqual')!.opsPerSecond,
    parse: results.get('floor + JSON.parse')!.opsPerSecond,
  };
  const label = `${Math.round(bytes / 1024)} KB`;
  tables.push({
    title: `Verify, ${label} body (${eventTemplate(bytes).bytes} bytes of nested JSON, Buffer input)`,
    columns: ['verifier', 'ops/s (median)', 'vs floor', 'floor used'],
    rows: [...results.values()].map(({ task, opsPerSecond }) => [
      task.name,
      ops(opsPerSecond),
      ratio(opsPerSecond / floor[task.floor]),
      task.floor === 'verify' ? 'HMAC' : 'HMAC + JSON.parse',
    ]),
  });
  const ours = results.get('workforce-webhooks verify + parseEvent')!.opsPerSecond;
  const stripeEvent = results.get('stripe webhooks.constructEvent')!.opsPerSecond;
  targets.push(
    { name: `verify + parse vs floor + parse, ${label}`, value: ours / floor.parse, goal: 0.9 },
    {
      name: `verify + parse vs stripe constructEvent, ${label}`,
      value: ours / stripeEvent,
      goal: bytes === 1024 ? 1.1 : 1,
    },
  );
}
emit({ tables, targets });
