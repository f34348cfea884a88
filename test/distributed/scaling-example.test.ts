// examples/scaling runs as two real processes on one Redis, and the README shows its code as it is.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { sync } from '../../scripts/snippets.js';
import { redisUrl } from '../setup/redis-helpers.js';

const secret = 'whsec_scaling_example_test';
const script = fileURLToPath(new URL('../../examples/scaling/server.ts', import.meta.url));
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

// Starts the example; resolves with its port and the JSON lines it prints.
async function startExample(): Promise<{
  url: string;
  lines: Record<string, unknown>[];
  exited: Promise<number | null>;
}> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, REDIS_URL: redisUrl, PORT: '0', WORKFORCE_WEBHOOK_SECRET: secret },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const lines: Record<string, unknown>[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const port = await new Promise<number>((resolve, reject) => {
    let buffered = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const complete = buffered.split('\n');
      buffered = complete.pop() ?? '';
      for (const line of complete.filter(Boolean)) {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        lines.push(parsed);
        if (typeof parsed.listening === 'number') resolve(parsed.listening);
      }
    });
    void exited.then((code) => reject(new Error(`examples/scaling exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}/webhooks/workforce`, lines, exited };
}

describe('README "Running several instances"', () => {
  it('shows the example exactly as examples/scaling has it', () => {
    const doc = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(doc).toContain('<!-- snippet: examples/scaling/server.ts#scaling -->');
    // This example's snippet (test/readme.test.ts checks the others).
    expect(sync(doc).stale.filter((snippet) => snippet.startsWith('examples/scaling/'))).toEqual([]);
  });
});

describe.skipIf(!redisUrl)('examples/scaling', () => {
  it('runs as two instances: duplicates across them are processed once, and SIGTERM drains and exits', async () => {
    const instances = await Promise.all([startExample(), startExample()]);
    const ids = Array.from({ length: 10 }, () => crypto.randomUUID());
    const answers = await Promise.all(
      ids.flatMap((id) =>
        instances.map(async ({ url }) => {
          // A leave request each: the example orders events per request, and the sample shares one.
          const data = { leaveRequestId: id } as never;
          const delivery = await createSignedDelivery({ secret, type: 'leave.approved', id, data });
          return (await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body }))
            .status;
        }),
      ),
    );
    // Per event: one 202, and the other copy a duplicate (200) or still in progress (409, retried later).
    for (let i = 0; i < ids.length; i++) {
      expect(answers.slice(2 * i, 2 * i + 2).sort()).toEqual(expect.arrayContaining([202]));
    }
    expect(answers.filter((status) => status === 202)).toHaveLength(ids.length);
    const processed = () =>
      instances.flatMap(({ lines }) => lines.map((line) => line.processed).filter(Boolean));
    await expect.poll(() => processed().length, { timeout: 30_000 }).toBe(ids.length);
    expect([...processed()].sort()).toEqual([...ids].sort());
    // Each instance serves its own workforce_webhooks.* metrics to Prometheus on /metrics.
    const scrapes = await Promise.all(
      instances.map(async ({ url }) => (await fetch(new URL('/metrics', url))).text()),
    );
    const accepted = scrapes
      .map((text) => /^workforce_webhooks_deliveries_total\{outcome="accepted"[^}]*\} (\d+)$/m.exec(text))
      .reduce((sum, found) => sum + Number(found?.[1] ?? 0), 0);
    expect(accepted).toBe(ids.length);
    for (const text of scrapes) expect(text).toContain('# TYPE workforce_webhooks_queue_depth gauge');

    // The ordered handler: a leave request's older event, arriving after its newer one was handled, is stale.
    const leaveRequestId = crypto.randomUUID();
    const [newer, older] = await Promise.all(
      (
        [
          ['leave.cancelled', '2026-11-02T08:00:02.000000Z'],
          ['leave.approved', '2026-11-02T08:00:01.000000Z'],
        ] as const
      ).map(([type, occurredAt]) =>
        createSignedDelivery({ secret, type, occurredAt, data: { leaveRequestId } as never }),
      ),
    );
    const post = async (delivery: NonNullable<typeof older>) =>
      fetch(instances[0]!.url, { method: 'POST', headers: delivery.headers, body: delivery.body });
    expect((await post(newer!)).status).toBe(202);
    await expect.poll(() => processed().includes(newer!.event.id), { timeout: 30_000 }).toBe(true);
    const stale = await post(older!);
    expect([stale.status, await stale.json()]).toEqual([200, { received: true, stale: true }]);
    const lines = instances.flatMap((instance) => instance.lines);
    expect(lines).toContainEqual(
      expect.objectContaining({ processed: newer!.event.id, record: leaveRequestId }),
    );
    expect(lines).toContainEqual({ stale: older!.event.id, newer: newer!.event.id });

    for (const child of children) child.kill('SIGTERM');
    expect(await Promise.all(instances.map(({ exited }) => exited))).toEqual([0, 0]);
    // Drained and gone: each event ran once on the two instances together, none again after the count above.
    expect([...processed()].sort()).toEqual([...ids, newer!.event.id].sort());
  });

  it("serves on /metrics the README's scrape: five events, one sent twice, one forged, one type with no handler", async () => {
    const instance = await startExample();
    const post = async (delivery: { headers: Record<string, string>; body: string }) =>
      (await fetch(instance.url, { method: 'POST', headers: delivery.headers, body: delivery.body })).status;
    const events = await Promise.all(
      Array.from({ length: 5 }, () =>
        createSignedDelivery({
          secret,
          type: 'leave.approved',
          data: { leaveRequestId: crypto.randomUUID() } as never,
        }),
      ),
    );
    for (const event of events) expect(await post(event)).toBe(202);
    const ran = (id: string) => instance.lines.some((line) => line.processed === id);
    await expect.poll(() => events.every((event) => ran(event.event.id)), { timeout: 30_000 }).toBe(true);
    expect(await post(events[0]!)).toBe(200);
    expect(
      await post(await createSignedDelivery({ secret: 'whsec_another_endpoint', type: 'leave.approved' })),
    ).toBe(400);
    expect(await post(await createSignedDelivery({ secret, type: 'employee.created' }))).toBe(200);

    const scrape = (await (await fetch(new URL('/metrics', instance.url))).text()).split('\n');
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const block = readme.slice(readme.indexOf('A scrape of the scaling example'));
    const shown = block.slice(
      block.indexOf('```text') + 8,
      block.indexOf('```', block.indexOf('```text') + 8),
    );
    const lines = shown.trim().split('\n');
    // This process's answers, exactly as the README shows them.
    const answers = lines.filter((line) => line.startsWith('workforce_webhooks_deliveries_total'));
    expect(answers).toHaveLength(4);
    for (const line of answers) expect(scrape).toContain(line);
    // The handler and attempt series exist as shown; their counts may include jobs an earlier test left in the
    // example's queue, and the duration's sum is the machine's.
    for (const line of lines.filter((one) => !one.startsWith('workforce_webhooks_deliveries_total')))
      expect(scrape.some((one) => one.startsWith(line.slice(0, line.lastIndexOf(' '))))).toBe(true);
  });
});
