// Lists every dead letter, a page at a time, newest first: `npx tsx list.ts`.
// #region list
import { createReceiver } from 'workforce-webhooks';

const secret = process.env.WORKFORCE_WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WORKFORCE_WEBHOOK_SECRET to the endpoint secret (whsec_...)');
  process.exit(1);
}

// In an app, the receiver you mounted (with its store and queue: on BullMQ the letters are read from Redis).
const receiver = createReceiver({ secret });

for (let page = await receiver.deadLetters(); ; page = await receiver.deadLetters({ cursor: page.cursor })) {
  for (const letter of page.items) console.log(letter.event.id, letter.attempts, letter.failedAt);
  if (page.cursor === undefined) break;
}
await receiver.close();
// #endregion list
