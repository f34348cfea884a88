// A secret pasted with a mistake in its shape: the one line that says so also says what to do, never the secret.
import { createServer } from 'node:http';
import express from 'express';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createReceiver } from 'workforce-webhooks';
import { createExpressMiddleware } from 'workforce-webhooks/express';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { expectAnswer, post } from '../contract/adapter-client.js';
import { listen } from '../contract/adapter-listen.js';
import { recordingLogger } from '../support/logger.js';

const SECRET = 'whsec_first_hour_shape_Lp4';

describe('a secret whose shape is wrong', () => {
  for (const [name, configured, fix] of [
    ['with a trailing newline (an env file)', `${SECRET}\n`, '?.trim()'],
    ['with a trailing carriage return (an env file saved on Windows)', `${SECRET}\r`, '?.trim()'],
    ['with leading spaces', `  ${SECRET}`, 'remove it where the value is set'],
    ['wrapped in quotes', `"${SECRET}"`, 'remove the quotes'],
    ['without its whsec_ prefix', SECRET.slice('whsec_'.length), 'pass it exactly as shown'],
  ] as const) {
    it(`is said once, ${name}, with what to do, and deliveries are refused as forged`, async () => {
      const logger = recordingLogger();
      const receiver = createReceiver({ secret: configured, logger });
      onTestFinished(() => receiver.close());
      const app = express();
      app.all('/webhooks/workforce', createExpressMiddleware(receiver));
      const mounted = await listen(createServer(app));
      onTestFinished(() => mounted.close());

      for (let i = 0; i < 2; i++) {
        const delivery = await createSignedDelivery({ secret: SECRET, type: 'leave.approved' });
        expectAnswer(await post(mounted.url, delivery), 400, { error: 'signature_mismatch' });
      }
      const shape = logger.lines.filter((line) => line.msg?.includes('the secret') === true);
      expect(shape).toHaveLength(1);
      expect(shape[0]!.level).toBe('warn');
      expect(shape[0]!.msg).toContain(fix);
      expect(JSON.stringify(logger.lines)).not.toContain('first_hour_shape');
    });
  }
});
