// A host that hands the app its headers as a plain object in the sender's case (an API Gateway or Azure Functions
// event's `headers`: `Svc-Signature`, not `svc-signature`) gets its deliveries verified, not refused 400
// missing_signature for a header that is there.
import { createServer, type IncomingMessage } from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver, type Receiver } from 'workforce-webhooks';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { expectAnswer, post, send } from '../contract/adapter-client.js';
import { listen } from '../contract/adapter-listen.js';
import { recordingLogger } from '../support/logger.js';

const SECRET = 'whsec_first_hour_header_case_Lm2';

/** The request's headers as a serverless event carries them: one key per header, in the case it was sent. */
function eventHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers[req.rawHeaders[i]!] = req.rawHeaders[i + 1]!;
  return headers;
}

/** A node:http server on loopback that calls `receiver.handle` with the event-style headers and the raw body. */
async function eventStyleApp(receiver: Receiver): Promise<string> {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const answer = await receiver.handle({
      method: req.method,
      headers: eventHeaders(req),
      body: new Uint8Array(Buffer.concat(chunks)),
    });
    res.writeHead(answer.status, answer.headers).end(answer.body);
  });
  const mounted = await listen(server);
  onTestFinished(() => mounted.close());
  return mounted.url;
}

describe('headers given as an object in the sender’s case', () => {
  it('are read whatever their case: the delivery is verified and handled', async () => {
    const logger = recordingLogger();
    const receiver = createReceiver({ secret: SECRET, logger, mode: 'inline' });
    onTestFinished(() => receiver.close());
    const seen: string[] = [];
    receiver.on('leave.approved', (event) => void seen.push(event.id));
    const url = await eventStyleApp(receiver);
    const delivery = await createSignedDelivery({ secret: SECRET, type: 'leave.approved' });
    const headers = {
      'Content-Type': 'application/json; charset=utf-8',
      'User-Agent': 'Svc-Webhooks/1.0',
      'Svc-Event-Id': delivery.event.id,
      'Svc-Event-Type': delivery.event.type,
      'Svc-Delivery-Id': delivery.headers['svc-delivery-id']!,
      'Svc-Signature': delivery.headers['svc-signature']!,
    };
    const answer = await post(url, { body: delivery.body, headers });
    expect(answer.status).toBe(200);
    expect(seen).toEqual([delivery.event.id]);
    expect(logger.lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
  });

  it('still holds the body to its Svc-Event-Id, whatever the header’s case', async () => {
    const receiver = createReceiver({ secret: SECRET, logger: recordingLogger() });
    onTestFinished(() => receiver.close());
    receiver.on('leave.approved', () => {});
    const url = await eventStyleApp(receiver);
    const delivery = await createSignedDelivery({ secret: SECRET, type: 'leave.approved' });
    const answer = await send(url, {
      method: 'POST',
      body: delivery.body,
      headers: {
        'Svc-Signature': delivery.headers['svc-signature']!,
        'Svc-Event-Id': '00000000-0000-4000-8000-0000000000ff',
      },
    });
    expectAnswer(answer, 400, { error: 'invalid_payload' });
  });
});
