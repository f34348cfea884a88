// Vitest global setup: a scratch directory for the run, where the first test that needs the packed package builds it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** An empty directory of this run; test/support/packed.ts builds and packs the package into it once. */
    packDir: string;
  }
}

let dir: string | undefined;

/**
 * Provides the run's pack directory; nothing is built until a test asks for the package (a run that needs none
 * pays nothing).
 * @example
 * // vitest.config.ts: test: { globalSetup: ['test/setup/package.ts'] }
 */
export function setup(project: TestProject): void {
  dir = mkdtempSync(join(tmpdir(), 'wfwh-pack-'));
  project.provide('packDir', dir);
}

/**
 * Removes the run's pack directory and the scratch projects in it.
 * @example
 * // called by vitest after the run
 */
export function teardown(): void {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
}
