// A throwaway project of a newcomer's kind, with this repository linked as `workforce-webhooks` (its built `dist/`,
// through the package's exports) and the peers it needs linked from this repository's node_modules.
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { root } from './packed.js';

/**
 * Makes the project under the system's temporary directory and returns its path; the caller removes it.
 * @example
 * const dir = linkedProject('wfwh-commonjs-otel-', 'commonjs', ['@opentelemetry/api', 'typescript']);
 */
export function linkedProject(prefix: string, type: 'module' | 'commonjs', links: readonly string[]): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'newcomer', version: '1.0.0', type }));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(root, join(dir, 'node_modules', 'workforce-webhooks'), 'dir');
  for (const name of links) {
    const target = join(dir, 'node_modules', name);
    mkdirSync(dirname(target), { recursive: true });
    symlinkSync(join(root, 'node_modules', name), target, 'dir');
  }
  return dir;
}
