// The framework quick starts pasted into the project `npm init -y` makes (`"type": "commonjs"`), as the README's
// install lines leave it: each compiles (strict, module nodenext) and runs with tsx, with no top-level await.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { region } from '../../scripts/snippets.js';
import { eventually, expectAnswer, post } from '../contract/adapter-client.js';
import { LEAVE_APPROVED } from '../contract/adapter-dedupe.js';
import { startExample } from '../support/example-process.js';
import { root } from '../support/packed.js';

const run = promisify(execFile);
const SECRET = 'whsec_commonjs_paste_Hy5';

// What the README shows for each framework, by the example file and region it is taken from.
const QUICKSTARTS = [
  ['express', 'examples/express/quickstart.ts', 'quickstart'],
  ['hono', 'examples/hono/quickstart.ts', 'quickstart'],
  ['fastify', 'examples/fastify/quickstart.ts', 'quickstart'],
  ['node', 'examples/node/server.ts', 'node'],
] as const;

// The package itself (its package.json exports) and what the README has users install beside it.
const LINKS = ['express', 'hono', '@hono/node-server', 'fastify', '@types/express', '@types/node', 'tsx'];

describe('the quick starts in a CommonJS project', { timeout: 120_000 }, () => {
  let scratch = '';
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'wfwh-commonjs-'));
    writeFileSync(
      join(scratch, 'package.json'),
      JSON.stringify({ name: 'newcomer', version: '1.0.0', type: 'commonjs' }),
    );
    mkdirSync(join(scratch, 'node_modules', '@types'), { recursive: true });
    mkdirSync(join(scratch, 'node_modules', '@hono'), { recursive: true });
    symlinkSync(root, join(scratch, 'node_modules', 'workforce-webhooks'), 'dir');
    for (const name of LINKS) {
      symlinkSync(join(root, 'node_modules', name), join(scratch, 'node_modules', name), 'dir');
    }
    for (const [name, file, part] of QUICKSTARTS) {
      const target = join(scratch, name, 'server.ts');
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, `${region(file, part)}\n`);
    }
    writeFileSync(
      join(scratch, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: 'nodenext',
          moduleResolution: 'nodenext',
          target: 'es2022',
          types: ['node'],
          skipLibCheck: true,
          noEmit: true,
        },
        include: ['*/server.ts'],
      }),
    );
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('compiles every quick start as pasted', async () => {
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const errors = await run(process.execPath, [tsc, '-p', join(scratch, 'tsconfig.json')]).then(
      () => '',
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    expect(errors).toBe('');
  });

  it.each(QUICKSTARTS.map(([name]) => name))(
    'runs the %s quick start: 202, handled, SIGTERM ends it',
    async (name) => {
      const { url, output, child } = await startExample(join(name, 'server.ts'), {
        cwd: scratch,
        env: { ...process.env, WORKFORCE_WEBHOOK_SECRET: SECRET },
      });
      const delivery = await createSignedDelivery({
        secret: SECRET,
        type: 'leave.approved',
        data: LEAVE_APPROVED,
      });
      expectAnswer(await post(url, delivery), 202, { received: true });
      await eventually(() => expect(output()).toContain(`leave.approved ${delivery.event.id}`));
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      expect(code).toBe(0);
    },
  );
});
