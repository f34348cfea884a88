// The App Router handler pasted into a Pages API route with runtime: 'edge': Next calls it with (NextRequest,
// NextFetchEvent) and no request scope, so `after()` throws; the queued work goes to the event's waitUntil, not lost.
import { NextFetchEvent } from 'next/dist/server/web/spec-extension/fetch-event.js';
import { NextRequest } from 'next/server.js';
import { describe, expect, it } from 'vitest';
import { createNextRouteHandler } from 'workforce-webhooks/next';
import { leaveApproved } from '../contract/adapter-dedupe.js';
import { watchedReceiver } from '../contract/adapter-suite.js';
import { recordingLogger } from '../support/logger.js';

describe('createNextRouteHandler as the default export of a Pages edge API route', () => {
  it("hands the queued work to the NextFetchEvent's waitUntil, saying nothing", async () => {
    const logger = recordingLogger();
    const { receiver, seen } = watchedReceiver({ logger });
    const handler = createNextRouteHandler(receiver) as (
      request: Request,
      event: unknown,
    ) => Promise<Response>;
    const kept: Promise<unknown>[] = [];
    const delivery = await leaveApproved();
    const request = new NextRequest(delivery.toRequest('https://app.example.com/api/webhooks'));
    // As Next's edge adapter makes it: the platform's waitUntil given as the event's context.
    const event = new NextFetchEvent({
      request,
      page: '/api/webhooks',
      context: { waitUntil: (work: Promise<unknown>) => void kept.push(work) },
    });
    const response = await handler(request, event);
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 202,
      body: { received: true },
    });
    expect(kept).toHaveLength(1);
    await Promise.all(kept);
    expect(seen).toEqual([delivery.event.id]);
    expect(logger.lines.filter((line) => line.level === 'warn' || line.level === 'error')).toEqual([]);
  });
});
