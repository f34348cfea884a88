// Every README snippet pasted into a project set up by `tsc --init` (exactOptionalPropertyTypes, verbatimModuleSyntax
// and the rest of its defaults) and into one on bundler resolution, as Next, Vite and esbuild projects are: each compiles.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { region } from '../../scripts/snippets.js';
import { linkedProject } from '../support/linked-project.js';
import { root } from '../support/packed.js';

const run = promisify(execFile);
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

// What the README has users install beside the package, linked from this repository's node_modules.
const LINKS = [
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
  '@opentelemetry/api',
  '@opentelemetry/sdk-metrics',
  '@opentelemetry/exporter-prometheus',
];

// The options `tsc --init` writes (TypeScript 5.9 and later), with `types: ['node']` as its comment says to add.
const TSC_INIT = {
  module: 'nodenext',
  target: 'esnext',
  types: ['node'],
  noUncheckedIndexedAccess: true,
  exactOptionalPropertyTypes: true,
  strict: true,
  verbatimModuleSyntax: true,
  isolatedModules: true,
  noUncheckedSideEffectImports: true,
  moduleDetection: 'force',
  skipLibCheck: true,
  noEmit: true,
};

/** The `path#region` of every snippet the README shows, read from its example file (not the README's copy). */
function snippets(): { path: string; code: string }[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  return [...readme.matchAll(/^<!-- snippet: (\S+?)#(\S+) -->$/gm)].map(([, path = '', name = '']) => ({
    path,
    code: region(path, name),
  }));
}

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

// tsc over every snippet: seconds, far more on a loaded machine.
describe('the README snippets in a newcomer project with strict compiler defaults', {
  timeout: 180_000,
}, () => {
  let scratch = '';
  beforeAll(() => {
    scratch = linkedProject('wfwh-newcomer-strict-', 'module', LINKS);
    // Each snippet where its example lives, so the relative imports between a section's files resolve.
    for (const { path, code } of snippets()) {
      const file = join(scratch, path.replace(/^examples\//, ''));
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, `${code}\n`);
    }
    writeFileSync(
      join(scratch, 'tsconfig.init.json'),
      // A Next app's extensionless imports are for a bundler: its files are checked by the bundler project below.
      JSON.stringify({ compilerOptions: TSC_INIT, include: ['**/*.ts'], exclude: ['node_modules', 'next'] }),
    );
    writeFileSync(
      join(scratch, 'tsconfig.bundler.json'),
      JSON.stringify({
        compilerOptions: { ...TSC_INIT, module: 'esnext', moduleResolution: 'bundler' },
        include: ['**/*.ts'],
        exclude: ['node_modules'],
      }),
    );
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('compiles every snippet under the options tsc --init writes (module nodenext)', async () => {
    expect(snippets().length).toBeGreaterThan(10);
    expect(await typeErrors(join(scratch, 'tsconfig.init.json'))).toBe('');
  });

  it('compiles every snippet under bundler resolution with the same strict options', async () => {
    expect(await typeErrors(join(scratch, 'tsconfig.bundler.json'))).toBe('');
  });
});
