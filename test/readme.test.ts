// The README's code blocks are regions of examples/ files (which smoke tests run), so they cannot rot.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sync } from '../scripts/snippets.js';

describe('README', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

  it('shows every snippet exactly as its example has it', () => {
    expect(sync(readme).stale).toEqual([]);
  });

  it('claims no runtime dependency only while package.json has none', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    expect(readme.replace(/\s+/g, ' ')).toContain('no runtime dependency of its own');
    expect(pkg.dependencies ?? {}).toEqual({});
  });

  it('gives the two set-up commands', () => {
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm test');
  });
});
