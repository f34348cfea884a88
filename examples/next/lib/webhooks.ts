// One receiver for the whole app: the secret, the handlers, and warnings that reach the server's output.
// #region receiver
import { createReceiver } from 'workforce-webhooks';

export const receiver = createReceiver({
  secret: process.env.WORKFORCE_WEBHOOK_SECRET ?? '',
  // Misconfigurations (a parsed body, after() unavailable) are logged once; send them where you will see them.
  logger: {
    debug() {},
    info() {},
    warn: (obj, msg) => console.warn(msg, obj),
    error: (obj, msg) => console.error(msg, obj),
  },
});

receiver.on('leave.approved', async (event) => {
  // Leave dates are calendar dates: keep the day as sent, never a local-zone Date.
  console.log(
    `handled ${event.type} ${event.id} for ${event.data.employeeId} from ${event.data.startDate.slice(0, 10)}`,
  );
});
// #endregion receiver
