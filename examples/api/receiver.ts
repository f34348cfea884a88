// A receiver whose handlers read the record through the read API (`ctx.api`).
// #region api
import { createReceiver } from 'workforce-webhooks';
import { createApiClient } from 'workforce-webhooks/api';

const secret = process.env.WORKFORCE_WEBHOOK_SECRET;
const apiKey = process.env.WORKFORCE_API_KEY;
// The service's `{base_url}`, the one the API key was issued for.
const baseUrl = process.env.WORKFORCE_API_URL;
if (!secret || !apiKey || !baseUrl) {
  console.error('Set WORKFORCE_WEBHOOK_SECRET, WORKFORCE_API_KEY and WORKFORCE_API_URL');
  process.exit(1);
}

const api = createApiClient({ apiKey, baseUrl });

const receiver = createReceiver({ secret, api });

receiver.on('leave.approved', async (event, ctx) => {
  // Spec rule 4: events can arrive out of order, so read the record as it is now rather than trust the event.
  const request = await ctx.api.leave.getRequest(event.data.leaveRequestId);
  console.log(
    `api: ${request.employeeName}, ${request.leaveTypeName} ${request.startDate}..${request.endDate}, ${request.leaveStatus}`,
  );
});
// #endregion api
