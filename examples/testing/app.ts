// The app under test in examples/testing: built by a function, so each test gets its own receiver.
// #region app
import express, { type Express } from 'express';
import { createReceiver, type Receiver } from 'workforce-webhooks';
import type { ApiClient } from 'workforce-webhooks/api';
import { createExpressMiddleware } from 'workforce-webhooks/express';

/** Builds the app; tests pass their own secret, a read-API client and somewhere to write. */
export function createApp({
  log = console.log,
  ...options
}: {
  secret: string;
  api?: ApiClient;
  log?: (line: string) => void;
}): { app: Express; receiver: Receiver } {
  // The rest, not `{ secret, api }`: an `api` left out stays left out, as `exactOptionalPropertyTypes` (on in
  // `tsc --init`'s tsconfig) requires of an optional option.
  const receiver = createReceiver(options);
  receiver.on('leave.approved', (event) => {
    const { employeeId, startDate, endDate } = event.data;
    log(`calendar: block ${employeeId} ${startDate.slice(0, 10)}..${endDate.slice(0, 10)}`);
  });
  const app = express();
  app.all('/webhooks/workforce', createExpressMiddleware(receiver));
  return { app, receiver };
}
// #endregion app
