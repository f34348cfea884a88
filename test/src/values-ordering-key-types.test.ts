// What `ordering.key` may return besides a string: undefined and null order nothing quietly; a number, an object or
// a boolean orders nothing too, and is said once per event type with the fix, never with the value.
import { describe, expect, it } from 'vitest';
import { createReceiver, type Receiver, type WorkforceEvent } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { recordingLogger } from '../support/logger.js';
import { until } from '../support/ordering-scenario.js';

const secret = 'whsec_values_ordering_key_types';
const encoder = new TextEncoder();

const deliver = async (receiver: Receiver, type: string, key: unknown) => {
  const signed = await createSignedDelivery({ secret, type, data: { key } as never });
  const answer = await receiver.handle({
    method: 'POST',
    headers: signed.headers,
    body: encoder.encode(signed.body),
  });
  await answer.background;
  return answer.status;
};

describe('ordering.key returning something other than a string', () => {
  it('runs the event unordered and says once per type that the key is not a string, without the value', async () => {
    const logger = recordingLogger();
    const receiver = createReceiver({
      secret,
      logger,
      // A JS key function returning the payload's value as it is.
      ordering: { key: (event: WorkforceEvent) => event.data.key as string | undefined },
    });
    const ran: unknown[] = [];
    receiver.on('*', (event) => void ran.push(event.data.key));
    const values: readonly [string, unknown][] = [
      ['leave.approved', 73_311],
      ['leave.approved', 73_312],
      ['employee.created', { id: 'ssn-123-45-6789' }],
      ['payroll.paid', true],
      ['loan.disbursed', ['secret-list']],
      ['leave.cancelled', null],
      ['leave.requested', undefined],
      ['leave.rejected', ''],
    ];
    for (const [type, key] of values) expect(await deliver(receiver, type, key)).toBe(202);
    await until(() => ran.length === values.length, 'every event');
    const said = logger.lines.filter((line) => String(line.obj.kind).startsWith('ordering_key_not_string'));
    expect(said.map((line) => [line.level, line.obj.type, line.obj.returned])).toEqual([
      ['warn', 'leave.approved', 'number'],
      ['warn', 'employee.created', 'object'],
      ['warn', 'payroll.paid', 'boolean'],
      ['warn', 'loan.disbursed', 'array'],
    ]);
    for (const line of said) {
      expect(line.msg).toContain("Return the record's key as a string");
      expect(JSON.stringify(line)).not.toMatch(/73311|ssn-123|secret-list/);
    }
    await receiver.close();
  });
});
