// Every `error` the receiver answers with is a WebhookErrorCode: a client can switch on the union and miss none.
import { describe, expect, expectTypeOf, it } from 'vitest';
import { answers, type WebhookErrorCode, type WebhookResponse } from 'workforce-webhooks';

// Exhaustive both ways: tsc refuses a key the union lacks, and one it has that is left out.
const CODES: Record<WebhookErrorCode, true> = {
  missing_signature: true,
  malformed_signature: true,
  timestamp_out_of_tolerance: true,
  signature_mismatch: true,
  invalid_payload: true,
  queue_full: true,
  store_unavailable: true,
  queue_unavailable: true,
  shutting_down: true,
  handler_failed: true,
  handler_timeout: true,
  lease_lost: true,
  raw_body_unavailable: true,
  not_configured: true,
  payload_too_large: true,
  body_timeout: true,
  invalid_options: true,
  in_progress: true,
  method_not_allowed: true,
  internal_error: true,
};

// Every answer of the status table, the nested 400 and 503 families included.
function everyAnswer(): WebhookResponse[] {
  const found: WebhookResponse[] = [];
  for (const value of Object.values(answers)) {
    if (typeof (value as WebhookResponse).status === 'number') found.push(value as WebhookResponse);
    else found.push(...Object.values(value as Record<string, WebhookResponse>));
  }
  return found;
}

describe('the error codes of the status table', () => {
  it('are each a WebhookErrorCode, 409 in_progress and 405 method_not_allowed among them', () => {
    const errors = everyAnswer()
      .map((answer) => (JSON.parse(answer.body) as { error?: string }).error)
      .filter((error) => error !== undefined);
    expect(errors).toEqual(expect.arrayContaining(['in_progress', 'method_not_allowed', 'handler_failed']));
    for (const error of errors) expect(Object.hasOwn(CODES, error!), error).toBe(true);
  });

  it('type the answers a client switches on', () => {
    expectTypeOf<'in_progress'>().toExtend<WebhookErrorCode>();
    expectTypeOf<'method_not_allowed'>().toExtend<WebhookErrorCode>();
    expectTypeOf<'internal_error'>().toExtend<WebhookErrorCode>();
  });
});
