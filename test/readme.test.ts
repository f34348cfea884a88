// The README's code blocks are regions of examples/ files (which smoke tests run), so they cannot rot.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sync, typescriptBlocks } from '../scripts/snippets.js';

describe('README', () => {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

  it('shows every snippet exactly as its example has it', () => {
    expect(sync(readme).stale).toEqual([]);
  });

  it('takes every TypeScript block from a file in examples/, which the tests compile and run', () => {
    const blocks = typescriptBlocks(readme);
    expect(blocks.length).toBeGreaterThan(10);
    expect(
      blocks.filter((block) => block.source === undefined).map((block) => `README line ${block.line}`),
    ).toEqual([]);
  });

  it('names every runtime dependency package.json declares, and no other', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    const declared = Object.keys(pkg.dependencies ?? {}).sort();
    const paragraph = /Its own runtime dependencies are ([^.]*)\./.exec(readme.replace(/\s+/g, ' '));
    expect(paragraph, 'the README says which runtime dependencies the package has').not.toBeNull();
    const named = [...paragraph![1]!.matchAll(/`([^`]+)` \(/g)].map((match) => match[1]).sort();
    expect(named).toEqual(declared);
  });

  it('names as proof only test files that exist, and in them only tests they have', () => {
    // The guarantee tables' "proved by" cells: `test/…` followed by the quoted names of tests in it ("…" elides the
    // start of a name).
    const named = [...readme.matchAll(/`(test\/[^`\s]+\.ts)`((?:[ ,;]*"[^"]+")*)/g)];
    expect(named.length).toBeGreaterThan(20);
    const missing: string[] = [];
    for (const [, path, titles] of named) {
      let source: string;
      try {
        source = readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
      } catch {
        missing.push(path!);
        continue;
      }
      for (const [, title] of titles!.matchAll(/"([^"]+)"/g))
        if (!source.includes(title!.replace(/^… /, ''))) missing.push(`${path} "${title}"`);
    }
    expect(missing).toEqual([]);
  });

  it('gives the two set-up commands', () => {
    expect(readme).toContain('npm install && npm start');
    expect(readme).toContain('npm test');
  });
});
