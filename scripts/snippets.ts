// Keeps the README's code in step with examples/: every `<!-- snippet: path#region -->` line is followed by a
// fenced block holding that region of that file. `--write` rewrites the blocks; without it, lists what differs.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const MARKER = /^<!-- snippet: (\S+?)#(\S+) -->$/;

/** The lines between `// #region name` and `// #endregion name` of a file, dedented. */
export function region(path: string, name: string): string {
  const lines = readFileSync(root + path, 'utf8').split('\n');
  const start = lines.findIndex((line) => line.trim() === `// #region ${name}`);
  const end = lines.findIndex((line, i) => i > start && line.trim() === `// #endregion ${name}`);
  if (start === -1 || end === -1) throw new Error(`${path} has no region "${name}"`);
  const body = lines.slice(start + 1, end);
  const indent = Math.min(...body.filter((l) => l.trim()).map((l) => l.length - l.trimStart().length));
  return body.map((l) => l.slice(indent)).join('\n');
}

/** The document with every snippet block replaced by its region; `stale` lists the ones that differed. */
export function sync(markdown: string): { text: string; stale: string[] } {
  const lines = markdown.split('\n');
  const stale: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const match = MARKER.exec(lines[i]!);
    if (!match) continue;
    const [, path = '', name = ''] = match;
    const open = i + 1;
    if (!lines[open]?.startsWith('```'))
      throw new Error(`README line ${i + 1}: a snippet marker must be followed by a code fence`);
    const close = lines.findIndex((line, j) => j > open && line.startsWith('```'));
    const wanted = region(path, name);
    if (lines.slice(open + 1, close).join('\n') !== wanted) stale.push(`${path}#${name}`);
    lines.splice(open + 1, close - open - 1, ...wanted.split('\n'));
  }
  return { text: lines.join('\n'), stale };
}

/** A fenced TypeScript block of a document: the example file it comes from (by its snippet marker), if any. */
export interface CodeBlock {
  /** The `examples/...` path of its snippet marker; undefined when the block has no marker. */
  readonly source: string | undefined;
  readonly code: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
}

/** Every fenced `ts` block of a document, with the example file its snippet marker names. */
export function typescriptBlocks(markdown: string): CodeBlock[] {
  const lines = markdown.split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== '```ts') continue;
    const close = lines.findIndex((line, j) => j > i && line.trim() === '```');
    const marker = MARKER.exec(lines[i - 1] ?? '');
    blocks.push({ source: marker?.[1], code: lines.slice(i + 1, close).join('\n'), line: i + 1 });
    i = close;
  }
  return blocks;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = `${root}README.md`;
  const { text, stale } = sync(readFileSync(file, 'utf8'));
  if (process.argv.includes('--write')) writeFileSync(file, text);
  else if (stale.length > 0) {
    console.error(`README snippets out of date: ${stale.join(', ')} (run: npm run docs:snippets)`);
    process.exit(1);
  }
}
