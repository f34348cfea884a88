// Replays the leave.* dead letters of the last day, then drops the cancelled ones of before November: `npx tsx replay.ts`.
// #region replay
import { createReceiver } from 'workforce-webhooks';

const secret = process.env.WORKFORCE_WEBHOOK_SECRET;
if (!secret) {
  console.error('Set WORKFORCE_WEBHOOK_SECRET to the endpoint secret (whsec_...)');
  process.exit(1);
}

// In an app, the receiver you mounted, so that its handlers run what is replayed.
const receiver = createReceiver({ secret });

// Each match runs once, even if another instance or operator replays the same letters at the same time.
const { replayed, failed } = await receiver.replayDeadLetters(
  { type: 'leave.*', since: new Date(Date.now() - 24 * 3600_000) },
  { concurrency: 5, onProgress: ({ done }) => done % 100 === 0 && console.log(`${done} handled`) },
);
console.log(`replayed ${replayed}; ${failed} could not be queued and stay dead letters`);

const dropped = await receiver.discardDeadLetters({ type: 'leave.cancelled', until: '2026-11-01T00:00:00Z' });
console.log(`discarded ${dropped}`);
await receiver.close();
// #endregion replay
