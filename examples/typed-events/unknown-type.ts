// A type the map does not name yet, let in on purpose with `unknownType`.
// #region unknown
import { createReceiver, unknownType } from 'workforce-webhooks';

const secret = process.env.WORKFORCE_WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WORKFORCE_WEBHOOK_SECRET to the endpoint secret (whsec_...)');
  process.exit(1);
}

const receiver = createReceiver({ secret });

receiver.on(unknownType('benefits.enrolled'), (event) => {
  console.log(event.type, Object.keys(event.data));
});
// #endregion unknown
