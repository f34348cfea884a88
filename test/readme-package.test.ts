// The README against the package as published: built, packed with `npm pack`, installed into scratch projects.
// Every TypeScript block compiles there as pasted, the quick starts run, and every relative link is in the tarball.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSignedDelivery } from 'workforce-webhooks/testing';
import { typescriptBlocks } from '../scripts/snippets.js';
import { eventually, expectAnswer, post } from './contract/adapter-client.js';
import { LEAVE_APPROVED } from './contract/adapter-dedupe.js';
import { type StartedExample, startExample } from './support/example-process.js';
import { packedPackage, root, scratchProject } from './support/packed.js';

const run = promisify(execFile);
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const SECRET = 'whsec_readme_paste_Qm7vT2';

// What the README tells users to install next to the package, linked from this repository's node_modules.
const INSTALLS = [
  'express',
  '@types/express',
  '@types/node',
  'hono',
  '@hono/node-server',
  'fastify',
  'ioredis',
  'bullmq',
  'pg',
  '@types/pg',
  'next',
  'react',
  'react-dom',
  '@types/react',
  'vitest',
  'supertest',
  '@types/supertest',
  'tsx',
  '@opentelemetry/api',
  '@opentelemetry/sdk-metrics',
  '@opentelemetry/exporter-prometheus',
];

/** The TypeScript errors of one tsc project, as text (empty when it compiles). */
async function typeErrors(project: string): Promise<string> {
  try {
    await run(process.execPath, [tsc, '-p', project], { maxBuffer: 16 * 1024 * 1024 });
    return '';
  } catch (error) {
    const { stdout = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    return `${stdout}${stderr}` || String(error);
  }
}

// tsc over a whole scratch project and server start-ups: seconds each, far more on a loaded machine.
describe('the README against the packed package', { timeout: 180_000 }, () => {
  let scratch = '';
  const blocks = typescriptBlocks(readme);

  beforeAll(async () => {
    scratch = await scratchProject('readme', INSTALLS);
    // Each block is written where its example lives, under the example's folder: examples/next/lib/webhooks.ts
    // becomes next/lib/webhooks.ts, so the relative imports between a project's files resolve as in the README.
    for (const { source, code } of blocks) {
      if (source === undefined) continue;
      const file = join(scratch, source.replace(/^examples\//, ''));
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, `${code}\n`);
    }
    const strict = { strict: true, target: 'es2022', types: ['node'], skipLibCheck: true, noEmit: true };
    writeFileSync(
      join(scratch, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { ...strict, module: 'nodenext', moduleResolution: 'nodenext' },
        include: ['**/*.ts'],
        exclude: ['node_modules', 'next'],
      }),
    );
    // A Next app is type-checked as create-next-app sets it up: bundler resolution, extensionless imports.
    writeFileSync(
      join(scratch, 'next', 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { ...strict, module: 'esnext', moduleResolution: 'bundler', jsx: 'preserve' },
        include: ['**/*.ts'],
      }),
    );
  }, 600_000);

  it('ships no source maps: dist is the sources with their types erased, and src/ is not in the package', async () => {
    const { files } = await packedPackage();
    expect(files.filter((file) => file.endsWith('.map'))).toEqual([]);
    const js = files.filter((file) => file.endsWith('.js'));
    expect(js.length).toBeGreaterThan(10);
    const installed = join(scratch, 'node_modules', 'workforce-webhooks');
    for (const file of js)
      expect(readFileSync(join(installed, file), 'utf8')).not.toContain('sourceMappingURL');
  });

  it('links only files the package ships', async () => {
    const { files } = await packedPackage();
    const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)]
      .map((match) => match[1]!.split('#')[0]!)
      .filter((target) => target !== '' && !/^[a-z]+:/i.test(target));
    expect(links.length).toBeGreaterThan(0);
    expect(links.filter((link) => !files.includes(link.replace(/^\.\//, '')))).toEqual([]);
  });

  it('compiles every TypeScript block as pasted (strict, module nodenext)', async () => {
    expect(readdirSync(scratch)).toContain('express');
    expect(await typeErrors(join(scratch, 'tsconfig.json'))).toBe('');
  });

  it('compiles the Next.js files as pasted into a Next app', async () => {
    expect(await typeErrors(join(scratch, 'next', 'tsconfig.json'))).toBe('');
  });

  /** Starts a pasted server file with tsx, as the README says to, and resolves with its URL and its output. */
  const start = (file: string): Promise<StartedExample> =>
    startExample(file, { cwd: scratch, env: { ...process.env, WORKFORCE_WEBHOOK_SECRET: SECRET } });

  it('runs the Express quick start: a signed delivery is answered 202 and handled, and SIGTERM stops it', async () => {
    const { url, output, child } = await start('express/quickstart.ts');
    const delivery = await createSignedDelivery({
      secret: SECRET,
      type: 'leave.approved',
      data: LEAVE_APPROVED,
    });
    expectAnswer(await post(url, delivery), 202, { received: true });
    expectAnswer(await post(url, delivery), 200, { received: true, duplicate: true });
    const get = await fetch(url);
    expect([get.status, get.headers.get('allow')]).toEqual([405, 'POST']);
    await eventually(() =>
      expect(output()).toContain(`calendar: block ${LEAVE_APPROVED.employeeId} 2026-11-02..2026-11-06`),
    );
    expect(output()).toContain(`audit: leave.approved ${delivery.event.id}`);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });

  it.each(['hono/quickstart.ts', 'fastify/quickstart.ts', 'node/server.ts'])(
    'runs %s: a signed delivery is answered 202 and handled',
    async (file) => {
      const { url, output } = await start(file);
      const delivery = await createSignedDelivery({
        secret: SECRET,
        type: 'leave.approved',
        data: LEAVE_APPROVED,
      });
      expectAnswer(await post(url, delivery), 202, { received: true });
      await eventually(() => expect(output()).toContain(`audit: leave.approved ${delivery.event.id}`));
    },
  );
});
