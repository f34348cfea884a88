// `npm start`: a local Workforce Service delivers signed events to the example Express receiver, on embedded defaults.
import type { AddressInfo } from 'node:net';
import { createApiClient } from 'workforce-webhooks/api';
import { createMockService, createSignedDelivery, type Emission } from 'workforce-webhooks/testing';
import { createExampleApp, DEMO_SECRET } from './express/server.js';

const say = (line = ''): void => console.log(line);
// What the handlers did, printed after the answer of each step.
const handled: string[] = [];
let unprinted: string[] = [];
const report = (line: string): void => {
  handled.push(line);
  unprinted.push(line);
};

const mock = await createMockService();
const api = createApiClient({ apiKey: mock.apiKeys.full, baseUrl: mock.baseUrl });
const { app, receiver } = createExampleApp({
  secret: DEMO_SECRET,
  api,
  log: report,
});

receiver.on('leave.approved', async (event, ctx) => {
  // Spec rule 4: events can arrive out of order, so read the record as it is now rather than trust the event.
  const request = await ctx.api.leave.getRequest(event.data.leaveRequestId);
  report(
    `api: ${request.employeeName}, ${request.leaveTypeName} ${request.startDate}..${request.endDate}, ${request.leaveStatus}`,
  );
});

const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/workforce`;
mock.subscribe(url, { secret: DEMO_SECRET });

// Handlers run from the queue after the 202: print what they did once they have been quiet for a moment.
async function handlers(): Promise<void> {
  let seen = -1;
  for (let waited = 0; seen !== handled.length && waited < 5000; waited += 100) {
    seen = handled.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  for (const line of unprinted) say(`   handler  ${line}`);
  if (unprinted.length === 0) say('   handler  (none ran)');
  unprinted = [];
}

function answers(emission: Emission): void {
  for (const attempt of emission.attempts)
    say(`   answer   ${attempt.status ?? attempt.error} ${attempt.body ?? ''}`);
}

async function post(delivery: Awaited<ReturnType<typeof createSignedDelivery>>): Promise<void> {
  const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
  say(`   answer   ${response.status} ${await response.text()}`);
}

say('workforce-webhooks demo');
say(`   service   ${mock.baseUrl} (a local Workforce Service: read API and webhook sender)`);
say(`   receiver  ${url} (examples/express)`);

say('\n1. HR approves a leave request: the service sends leave.approved, signed');
const pending = mock.state.leaveRequests.find((request) => request.statusId === 0)!;
const approved = await mock.approveLeave(pending.id);
answers(approved);
await handlers();

say('\n2. The same event arrives again, as a new delivery: answered 2xx, handlers not run again');
await post(
  await createSignedDelivery({
    secret: DEMO_SECRET,
    type: 'leave.approved',
    id: approved.event.id,
    data: approved.event.data as never,
  }),
);
await handlers();

say('\n3. A delivery signed with the wrong secret: refused with 400, nothing runs');
answers(await mock.sendTest({ faults: { badSignature: true } }));
await handlers();

say('\n4. A captured delivery replayed ten minutes later: refused with 400');
await post(
  await createSignedDelivery({
    secret: DEMO_SECRET,
    type: 'leave.approved',
    timestamp: Math.floor(Date.now() / 1000) - 600,
  }),
);
await handlers();

say('\n5. An event type this app has no specific handler for: accepted; only the catch-all sees it');
answers(await mock.emit('benefits.enrolled', { employeeId: pending.employeeId }));
await handlers();

await receiver.close();
server.close();
await mock.close();
say(
  `\ndone: ${mock.deliveries.length} deliveries from the service and 2 by hand; handlers ran ${handled.length} times.`,
);
