// With no `logger` option, a warning said once per apiVersion or per event type is printed for each, however close.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMemoryQueue, createReceiver } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';

const secret = 'whsec_typed_events_said_once_per_kind';
const encoder = new TextEncoder();

async function delivery(type: string, apiVersion?: string) {
  const signed = await createSignedDelivery({ secret, type, apiVersion } as never);
  return { method: 'POST', headers: signed.headers, body: encoder.encode(signed.body) };
}

// What the default logger wrote to the console: the message of each line, and its fields.
function consoleLines(): Array<{ msg: string; fields: Record<string, unknown> | undefined }> {
  const lines: Array<{ msg: string; fields: Record<string, unknown> | undefined }> = [];
  const write = (msg: unknown, fields?: unknown): void => {
    lines.push({ msg: String(msg), fields: fields as Record<string, unknown> | undefined });
  };
  vi.spyOn(console, 'warn').mockImplementation(write);
  vi.spyOn(console, 'error').mockImplementation(write);
  return lines;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the default logger, given warnings said once per kind', () => {
  it('prints an unknown apiVersion once per version, a second one within the minute included', async () => {
    const lines = consoleLines();
    const receiver = createReceiver({ secret });
    receiver.on('leave.approved', () => {});
    for (const apiVersion of ['2027-01-01', '2027-02-01', '2027-01-01', '2027-02-01'])
      expect((await receiver.handle(await delivery('leave.approved', apiVersion))).status).toBe(202);
    await receiver.close();
    const versions = lines
      .filter((line) => line.msg === 'workforce-webhooks: unknown apiVersion, accepted')
      .map((line) => line.fields?.apiVersion);
    expect(versions).toEqual(['2027-01-01', '2027-02-01']);
  });

  it('prints a throwing ordering.key once per event type', async () => {
    const lines = consoleLines();
    const receiver = createReceiver({
      secret,
      queue: createMemoryQueue({ attempts: 1 }),
      ordering: {
        key: () => {
          throw new Error('no key');
        },
      },
    });
    receiver.on('leave.*', () => {});
    for (const type of ['leave.approved', 'leave.rejected', 'leave.approved'])
      expect((await receiver.handle(await delivery(type))).status).toBe(202);
    await receiver.close();
    const types = lines
      .filter((line) => line.msg.includes('ordering.key threw'))
      .map((line) => line.fields?.type);
    expect(types).toEqual(['leave.approved', 'leave.rejected']);
  });
});
