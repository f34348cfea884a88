// One receiver for the whole app: the secret read at each delivery (so `next build` needs none), and the handlers.
// #region receiver
import { createReceiver } from 'workforce-webhooks';

export const receiver = createReceiver({
  // `next build` evaluates this module, usually where the secret is not set: a function is read at each delivery,
  // and until the variable is there, deliveries are answered 500 not_configured with a line on stderr saying so.
  secret: () => process.env.WORKFORCE_WEBHOOK_SECRET,
});

receiver.on('leave.approved', async (event) => {
  // Leave dates are calendar dates: keep the day as sent, never a local-zone Date.
  console.log(
    `handled ${event.type} ${event.id} for ${event.data.employeeId} from ${event.data.startDate.slice(0, 10)}`,
  );
});
// #endregion receiver
