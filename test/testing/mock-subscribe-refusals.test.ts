// The mock refuses at subscribe() an endpoint no delivery could reach, naming why and the fix, instead of failing
// every delivery to it with fetch's bare message.
import { describe, expect, it, onTestFinished } from 'vitest';
import { createMockService } from 'workforce-webhooks/testing';

describe("the mock's subscribe()", () => {
  it('refuses a URL on a port fetch refuses to connect to, naming the port and the fix', async () => {
    const mock = await createMockService({ today: '2026-06-15' });
    onTestFinished(() => mock.close());
    expect(() => mock.subscribe('http://127.0.0.1:6666/webhooks')).toThrow(
      /127\.0\.0\.1:6666\/webhooks: port 6666 is one fetch refuses to connect to .*; use another port/,
    );
    expect(() => mock.subscribe('http://127.0.0.1:6665/webhooks')).toThrow(/use another port/);
  });

  it('takes a URL on any other port, and on the default one', async () => {
    const mock = await createMockService({ today: '2026-06-15' });
    onTestFinished(() => mock.close());
    expect(mock.subscribe('http://127.0.0.1:3000/webhooks').url).toBe('http://127.0.0.1:3000/webhooks');
    expect(mock.subscribe('https://example.test/webhooks').url).toBe('https://example.test/webhooks');
  });
});
