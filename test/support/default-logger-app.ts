// A user's app with no `logger` option, run as a child process so its test reads the real stderr.
// `normal` sends only everyday traffic; `mistakes` makes every misconfiguration the default logger must name;
// `silenced` makes the same mistakes with `logger: false`. Answers go to stdout as JSON, one line.
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createMemoryQueue, createReceiver, type Logger, type Receiver } from 'workforce-webhooks';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { createSignedDelivery } from 'workforce-webhooks/testing';

const scenario = process.argv[2];
// `undefined` leaves the option out, as a user who never heard of it does.
const logger: Logger | false | undefined = scenario === 'silenced' ? false : undefined;
const options = logger === undefined ? {} : { logger };
const SECRET = 'whsec_default_logger_Yq4';
const encoder = new TextEncoder();
const answers: Record<string, number[]> = {};
const note = (name: string, status: number): void => {
  answers[name] = [...(answers[name] ?? []), status];
};

async function send(name: string, receiver: Receiver, signWith = SECRET, type = 'leave.approved', copy = 1) {
  const signed = await createSignedDelivery({ secret: signWith, type });
  const input = { method: 'POST', headers: signed.headers, body: encoder.encode(signed.body) };
  for (let i = 0; i < copy; i += 1) {
    const answer = await receiver.handle(input);
    note(name, answer.status);
    await answer.background;
  }
}

const fastQueue = () => createMemoryQueue({ attempts: 2, backoff: () => 1 });

if (scenario === 'normal') {
  const receiver = createReceiver({ secret: SECRET, queue: fastQueue() });
  receiver.on('leave.approved', () => {});
  await send('accepted then duplicate', receiver, SECRET, 'leave.approved', 2);
  await send('no handler', receiver, SECRET, 'payroll.paid');
  const get = await receiver.handle({ method: 'GET', headers: {} });
  answers.GET = [get.status];
  const probe = await receiver.handle({ method: 'POST', headers: {}, body: encoder.encode('{}') });
  answers['unsigned probe'] = [probe.status];
  // One forgery among verified deliveries is an attack or a probe, not a wrong secret.
  await send('lone forgery', receiver, 'whsec_attacker');
  await send('accepted', receiver);
  await receiver.close();
} else {
  // The secret pasted with a trailing newline: warned at createReceiver, before any delivery.
  createReceiver({ secret: `${SECRET}\n`, ...options });

  const wrongSecret = createReceiver({ secret: 'whsec_not_this_endpoints', ...options });
  wrongSecret.on('leave.approved', () => {});
  await send('wrong secret', wrongSecret, SECRET, 'leave.approved', 1);
  await send('wrong secret', wrongSecret);
  await send('wrong secret', wrongSecret);

  const failing = createReceiver({ secret: SECRET, queue: fastQueue(), ...options });
  failing.on('leave.approved', () => {
    throw new Error('the calendar service said no');
  });
  await send('dead letter', failing);
  await failing.close();

  // A build without the secret: read at each delivery, 500 until it is set, then served.
  const later = createReceiver({ secret: () => process.env.WORKFORCE_WEBHOOK_SECRET, ...options });
  later.on('leave.approved', () => {});
  await send('not configured', later);
  await send('not configured', later);
  process.env.WORKFORCE_WEBHOOK_SECRET = SECRET;
  await send('configured later', later);
  await later.close();

  // express.json() before the webhook route: the raw bytes are gone.
  const parsed = createReceiver({ secret: SECRET, ...options });
  const app = express();
  app.use(express.json());
  app.post('/webhooks/workforce', createExpressMiddleware(parsed));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  for (let i = 0; i < 2; i += 1) {
    const signed = await createSignedDelivery({ secret: SECRET, type: 'leave.approved' });
    const response = await fetch(`http://127.0.0.1:${port}/webhooks/workforce`, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
    });
    note('parsed body', response.status);
  }
  server.close();
}
process.stdout.write(`${JSON.stringify(answers)}\n`);
