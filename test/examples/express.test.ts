// Smoke test of examples/express: the README quick start, started on loopback and sent signed deliveries.
import { createServer } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { createExampleApp, DEMO_SECRET } from '../../examples/express/server.js';
import { eventually, expectAnswer, post } from '../contract/adapter-client.js';
import { LEAVE_APPROVED } from '../contract/adapter-dedupe.js';
import { listen } from '../contract/adapter-listen.js';
import type { MountedApp } from '../contract/adapter-suite.js';
import { expectValidCopyAndForgery, itRunsDirectly } from '../support/example-process.js';

const SECRET = 'whsec_example_test_4bV7qL2xR9';

describe('examples/express', () => {
  let mounted: MountedApp | undefined;
  afterEach(async () => {
    await mounted?.close();
    mounted = undefined;
    vi.unstubAllEnvs();
  });

  it('accepts a signed delivery, runs its typed, wildcard and catch-all handlers, then dedupes and refuses forgeries', async () => {
    const lines: string[] = [];
    const { app, receiver } = createExampleApp({ secret: SECRET, log: (line) => lines.push(line) });
    mounted = await listen(createServer(app));
    const delivery = await expectValidCopyAndForgery(mounted.url, SECRET);
    await receiver.close();

    expect(lines.sort()).toEqual(
      [
        `calendar: block ${LEAVE_APPROVED.employeeId} 2026-11-02..2026-11-06 (Annual Leave, delivery ${delivery.headers['svc-delivery-id']})`,
        `audit: leave.approved ${delivery.event.id}`,
        'metrics: leave.approved',
      ].sort(),
    );
  });

  it('reports a failing handler through onError, never in the answer', async () => {
    const lines: string[] = [];
    const { app, receiver } = createExampleApp({ secret: SECRET, log: (line) => lines.push(line) });
    receiver.on('employee.created', () => {
      throw new Error('directory unavailable');
    });
    mounted = await listen(createServer(app));
    const delivery = await createSignedDelivery({ secret: SECRET, type: 'employee.created' });
    const answer = await post(mounted.url, delivery);
    expectAnswer(answer, 202, { received: true });
    expect(answer.text).not.toContain('directory unavailable');
    await eventually(() =>
      expect(lines).toContain(`error: employee.created ${delivery.event.id}: Error: directory unavailable`),
    );
    await receiver.close({ timeoutMs: 10 });
  });

  it('verifies with WORKFORCE_WEBHOOK_SECRET when set, else with the demo secret', async () => {
    vi.stubEnv('WORKFORCE_WEBHOOK_SECRET', SECRET);
    const fromEnv = createExampleApp({ log: () => {} });
    mounted = await listen(createServer(fromEnv.app));
    const signed = await createSignedDelivery({
      secret: SECRET,
      type: 'leave.approved',
      data: LEAVE_APPROVED,
    });
    expectAnswer(await post(mounted.url, signed), 202, { received: true });
    await fromEnv.receiver.close();
    await mounted.close();

    vi.stubEnv('WORKFORCE_WEBHOOK_SECRET', undefined);
    const demo = createExampleApp({ log: () => {} });
    mounted = await listen(createServer(demo.app));
    const demoSigned = await createSignedDelivery({
      secret: DEMO_SECRET,
      type: 'leave.approved',
      data: LEAVE_APPROVED,
    });
    expectAnswer(await post(mounted.url, demoSigned), 202, { received: true });
    await demo.receiver.close();
  });

  itRunsDirectly('examples/express/server.ts', DEMO_SECRET);
});
