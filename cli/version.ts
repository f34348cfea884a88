// The package's version, read from its package.json wherever the CLI runs from (sources or dist).
import { readFileSync } from 'node:fs';

/**
 * The `version` of the `workforce-webhooks` package.json above this file (`cli/` in the sources, `dist/cli/` once built).
 * @example
 * io.stdout(`${packageVersion()}\n`);
 */
export function packageVersion(): string {
  for (const up of ['../package.json', '../../package.json']) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === 'workforce-webhooks' && typeof manifest.version === 'string')
        return manifest.version;
    } catch {
      // Not there from this layout: try the next one up.
    }
  }
  return 'unknown';
}
