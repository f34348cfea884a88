// The overview (`workforce-webhooks`, `--help`, `help`) lists every command with its description in one column.
import { describe, expect, it } from 'vitest';
import { runCli } from '../../cli/run.js';
import { capture } from './capture.js';

describe('the overview', () => {
  it('starts every command description at the same column', async () => {
    const io = capture();
    expect(await runCli([], io)).toBe(0);
    const section = io.out.split('Commands:\n')[1]!.split('\n\n')[0]!;
    const lines = section.split('\n');
    const names = lines.map((line) => /^ {2}(\S+)/.exec(line)?.[1]);
    expect(names).toEqual(['sign', 'send', 'check', 'mock', 'migrate', 'dead-letters']);
    // Where each description starts: after the name and at least two spaces.
    const starts = lines.map((line) => /^ {2}\S+ {2,}/.exec(line)?.[0].length);
    expect(starts.every((start) => start !== undefined)).toBe(true);
    expect(new Set(starts).size).toBe(1);
  });
});
