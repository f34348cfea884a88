// Contract scenarios: what is refused before any handler runs (signature, payload, size, method) and what is ignored.

import { expect } from 'vitest';
import { createSignedDelivery, signPayload } from 'workforce-webhooks/testing';
import { expectAnswer, post, postChunked, send } from './adapter-client.js';
import { leaveApproved } from './adapter-dedupe.js';
import { CONTRACT_SECRET, type ContractContext } from './adapter-suite.js';

// An injected clock: the tolerance scenarios sign 301 s away from it, never from the wall clock.
const NOW_MS = 1_800_000_000_000;
const NOW_S = NOW_MS / 1000;

/**
 * Registers the refusal scenarios: bad signatures, bad payloads, unknown type, oversized body, wrong method.
 * @example
 * verificationScenarios(context);
 */
export function verificationScenarios({ scenario, open }: ContractContext): void {
  // Every refusal: the handler must not have run.
  const openWatched = async (options: { now?: () => number } = {}) => {
    const { receiver, url } = await open(options);
    const seen: string[] = [];
    receiver.on('leave.approved', (event) => {
      seen.push(event.id);
    });
    return { receiver, url, seen };
  };

  scenario('forged signature', async () => {
    const { receiver, url, seen } = await openWatched();
    const forged = await leaveApproved({ secret: 'whsec_not_the_endpoint_secret' });
    expectAnswer(await post(url, forged), 400, { error: 'signature_mismatch' });
    // A valid signature of other bytes: the body was tampered with after signing.
    const genuine = await leaveApproved();
    const tampered = { ...genuine, body: genuine.body.replace('Annual Leave', 'Unpaid Leave') };
    expectAnswer(await post(url, tampered), 400, { error: 'signature_mismatch' });
    await receiver.close();
    expect(seen).toEqual([]);
  });

  scenario('missing signature', async () => {
    const { receiver, url, seen } = await openWatched();
    const { body, headers } = await leaveApproved();
    const { 'svc-signature': _dropped, ...unsigned } = headers;
    expectAnswer(await post(url, { body, headers: unsigned }), 400, { error: 'missing_signature' });
    await receiver.close();
    expect(seen).toEqual([]);
  });

  scenario('stale signature', async () => {
    const { receiver, url, seen } = await openWatched({ now: () => NOW_MS });
    const stale = await leaveApproved({ timestamp: NOW_S - 301 });
    expectAnswer(await post(url, stale), 400, { error: 'timestamp_out_of_tolerance' });
    await receiver.close();
    expect(seen).toEqual([]);
  });

  scenario('future signature', async () => {
    const { receiver, url, seen } = await openWatched({ now: () => NOW_MS });
    const future = await leaveApproved({ timestamp: NOW_S + 301 });
    expectAnswer(await post(url, future), 400, { error: 'timestamp_out_of_tolerance' });
    // The edge of the tolerance still passes: the check is `> 300`, not `>= 300`.
    const edge = await leaveApproved({ timestamp: NOW_S - 300 });
    expectAnswer(await post(url, edge), 202, { received: true });
    await receiver.close();
    expect(seen).toEqual([edge.event.id]);
  });

  scenario('garbled signature', async () => {
    const { receiver, url, seen } = await openWatched();
    const { body, headers } = await leaveApproved();
    for (const garbled of ['garbage', 't=soon,v1=abc', `v1=${'a'.repeat(64)}`]) {
      const answer = await post(url, { body, headers: { ...headers, 'svc-signature': garbled } });
      expectAnswer(answer, 400, { error: 'malformed_signature' });
    }
    await receiver.close();
    expect(seen).toEqual([]);
  });

  scenario('invalid JSON under a valid signature', async () => {
    const { receiver, url, seen } = await openWatched();
    const body = '{"id": "not json';
    const headers = {
      'content-type': 'application/json; charset=utf-8',
      'svc-signature': await signPayload({ payload: body, secret: CONTRACT_SECRET }),
    };
    expectAnswer(await post(url, { body, headers }), 400, { error: 'invalid_payload' });
    await receiver.close();
    expect(seen).toEqual([]);
  });

  scenario('Svc-Event-Id differs from the body', async () => {
    const { receiver, url, seen } = await openWatched();
    const { body, headers } = await leaveApproved();
    const mismatched = { ...headers, 'svc-event-id': crypto.randomUUID() };
    expectAnswer(await post(url, { body, headers: mismatched }), 400, { error: 'invalid_payload' });
    await receiver.close();
    expect(seen).toEqual([]);
  });

  scenario('unknown type', async () => {
    const { receiver, url, seen } = await openWatched();
    const delivery = await createSignedDelivery({ secret: CONTRACT_SECRET, type: 'timesheet.submitted' });
    expectAnswer(await post(url, delivery), 200, { received: true, ignored: true });
    await receiver.close();
    expect(seen).toEqual([]);
  });

  // A signed body twice the default maxBodyBytes.
  const oversized = async () => {
    const body = `{"padding":"${'x'.repeat(2 * 1024 * 1024)}"}`;
    const headers = {
      'content-type': 'application/json; charset=utf-8',
      'svc-signature': await signPayload({ payload: body, secret: CONTRACT_SECRET }),
    };
    return { body, headers };
  };

  scenario('2 MiB body', async () => {
    const { receiver, url, seen } = await openWatched();
    expectAnswer(await post(url, await oversized()), 413, { error: 'payload_too_large' });
    // The server stays up and answers the next delivery normally.
    const next = await leaveApproved();
    expectAnswer(await post(url, next), 202, { received: true });
    await receiver.close();
    expect(seen).toEqual([next.event.id]);
  });

  scenario('2 MiB body in chunks, with no length declared', async () => {
    const { receiver, url, seen } = await openWatched();
    expectAnswer(await postChunked(url, await oversized()), 413, { error: 'payload_too_large' });
    // A delivery framed the same way within the limit is read whole and accepted.
    const next = await leaveApproved();
    expectAnswer(await postChunked(url, next), 202, { received: true });
    await receiver.close();
    expect(seen).toEqual([next.event.id]);
  });

  scenario('GET', async () => {
    const { url } = await open();
    const answer = await send(url, { method: 'GET' });
    expectAnswer(answer, 405, { error: 'method_not_allowed' }, { allow: 'POST' });
  });
}
