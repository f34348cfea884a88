// The README's telemetry.ts in the project `npm init -y` makes (`"type": "commonjs"`): `workforce-webhooks/otel` is
// loaded through Node's require of ES modules, which takes no top-level await, and a delivery shows on /metrics.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { region } from '../../scripts/snippets.js';
import { eventually, expectAnswer, post } from '../contract/adapter-client.js';
import { LEAVE_APPROVED } from '../contract/adapter-dedupe.js';
import { startExample } from '../support/example-process.js';
import { linkedProject } from '../support/linked-project.js';
import { root } from '../support/packed.js';

const run = promisify(execFile);
const SECRET = 'whsec_commonjs_telemetry_Vq8';

// What the README's Telemetry section has users install, and the tools to compile and run the files.
const LINKS = [
  '@opentelemetry/api',
  '@opentelemetry/sdk-metrics',
  '@opentelemetry/exporter-prometheus',
  '@types/node',
  'tsx',
];

// The smallest app that mounts what telemetry.ts exports: the receiver on node:http, its metrics on /metrics.
const SERVER = `import { createServer } from 'node:http';
import { createReceiver } from 'workforce-webhooks';
import { createNodeHandler } from 'workforce-webhooks/node';
import { metrics, telemetry } from './telemetry.js';

const receiver = createReceiver({ secret: process.env.WORKFORCE_WEBHOOK_SECRET ?? '', telemetry });
receiver.on('leave.approved', (event) => console.log(\`handled \${event.id}\`));
const webhooks = createNodeHandler(receiver);
const server = createServer((req, res) => (req.url === '/metrics' ? metrics(req, res) : webhooks(req, res)));
server.listen(Number(process.env.PORT ?? 3000), () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  console.log(\`listening on http://localhost:\${port}/webhooks/workforce\`);
});
process.once('SIGTERM', async () => {
  await receiver.close();
  server.close();
});
`;

describe('telemetry in a CommonJS project', { timeout: 120_000 }, () => {
  let scratch = '';
  beforeAll(() => {
    scratch = linkedProject('wfwh-commonjs-otel-', 'commonjs', LINKS);
    writeFileSync(join(scratch, 'telemetry.ts'), `${region('examples/scaling/telemetry.ts', 'telemetry')}\n`);
    writeFileSync(join(scratch, 'server.ts'), SERVER);
    writeFileSync(
      join(scratch, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'nodenext',
          target: 'es2022',
          types: ['node'],
          skipLibCheck: true,
          noEmit: true,
        },
        include: ['*.ts'],
      }),
    );
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('compiles telemetry.ts as pasted', async () => {
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const errors = await run(process.execPath, [tsc, '-p', join(scratch, 'tsconfig.json')]).then(
      () => '',
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    expect(errors).toBe('');
  });

  it('requires workforce-webhooks/otel, handles a delivery, and counts it on /metrics', async () => {
    const { url, output, child } = await startExample('server.ts', {
      cwd: scratch,
      env: { ...process.env, WORKFORCE_WEBHOOK_SECRET: SECRET },
    });
    const delivery = await createSignedDelivery({
      secret: SECRET,
      type: 'leave.approved',
      data: LEAVE_APPROVED,
    });
    expectAnswer(await post(url, delivery), 202, { received: true });
    await eventually(() => expect(output()).toContain(`handled ${delivery.event.id}`));
    const scrape = await (await fetch(new URL('/metrics', url))).text();
    expect(scrape).toMatch(/^workforce_webhooks_deliveries_total\{outcome="accepted",[^}]*\} 1$/m);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });
});
