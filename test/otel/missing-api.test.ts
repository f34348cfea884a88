// Without @opentelemetry/api installed, importing workforce-webhooks/otel fails naming the package to install.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'wfwh-no-otel-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('names @opentelemetry/api as the package missing', () => {
  // Node's own resolution, told the package is not there: what an app without the optional peer sees.
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `export async function resolve(specifier, context, next) {
  if (specifier === '@opentelemetry/api') {
    const error = new Error("Cannot find package '@opentelemetry/api'");
    error.code = 'ERR_MODULE_NOT_FOUND';
    throw error;
  }
  return next(specifier, context);
}`,
  );
  writeFileSync(
    join(dir, 'register.mjs'),
    `import { register } from 'node:module';\nregister(${JSON.stringify(new URL(`file://${join(dir, 'hooks.mjs')}`).href)});`,
  );
  const run = spawnSync(
    process.execPath,
    [
      '--import',
      join(dir, 'register.mjs'),
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `await import(${JSON.stringify(join(root, 'adapters/otel.ts'))});`,
    ],
    { cwd: root, encoding: 'utf8', timeout: 60_000 },
  );
  expect(run.status).not.toBe(0);
  expect(run.stderr).toContain("Cannot find package '@opentelemetry/api'");
});
