// Imports run one way: no module of src/ or adapters/ reaches itself again through its static imports.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
// `import ... from`, `import type ... from`, `export ... from` and a bare `import '...'`, across line breaks.
const STATIC_IMPORT = /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/g;

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every static import of each file that is another file of the tree, by path relative to the repository. */
function importGraph(dirs: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of dirs.flatMap(sources)) {
    const text = readFileSync(join(root, file), 'utf8');
    const targets: string[] = [];
    for (const [, specifier] of text.matchAll(STATIC_IMPORT)) {
      if (!specifier!.startsWith('.')) continue;
      const target = relative(root, resolve(root, dirname(file), specifier!.replace(/\.js$/, '.ts')));
      targets.push(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** The cycles of a graph, each as the path that closes it (depth-first, one per back edge). */
function cycles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (node: string): void => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (state.get(next) === undefined && graph.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) if (state.get(node) === undefined) visit(node);
  return found;
}

describe('imports', () => {
  it('form no cycle in src/ and adapters/ (type-only imports included)', () => {
    const graph = importGraph(['src', 'adapters']);
    expect(graph.size).toBeGreaterThan(20);
    expect(cycles(graph).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });

  it('finds a cycle when there is one (the walk itself)', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(cycles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
    // And the regular expression sees type-only and multi-line imports.
    const text =
      "import type {\n  A,\n  B,\n} from './x.js';\nexport { c } from \"./y.js\";\nimport './z.js';";
    expect([...text.matchAll(STATIC_IMPORT)].map((m) => m[1])).toEqual(['./x.js', './y.js', './z.js']);
  });
});
