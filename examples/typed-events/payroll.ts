// A payload typed by adding its event type to `EventDataMap` (declaration merging).
// #region map
import { createReceiver } from 'workforce-webhooks';

declare module 'workforce-webhooks' {
  interface EventDataMap {
    // Give a documented type its fields, or add a type of your own (write payloads as type literals).
    'payroll.paid': { readonly payrollId: string; readonly employeeCount: number };
  }
}

const secret = process.env.WORKFORCE_WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WORKFORCE_WEBHOOK_SECRET to the endpoint secret (whsec_...)');
  process.exit(1);
}

const receiver = createReceiver({ secret });

receiver.on('payroll.paid', (event) => {
  console.log(`payroll ${event.data.payrollId}: ${event.data.employeeCount} employees`);
});
// #endregion map
