// An in-process CliIo for runCli: standard input given, standard output and error collected as text.
import type { CliIo } from '../../cli/io.js';

/** A CliIo whose output the test reads back. */
export type CapturedIo = CliIo & { out: string; err: string };

/**
 * A CliIo reading `stdin` and collecting what the CLI writes in `out` and `err`; `extra` sets the rest (`signal`...).
 * @example
 * const io = capture('{}');
 * await runCli(['sign', '--secret', 'whsec_x'], io);
 */
export function capture(stdin = '', extra: Partial<CliIo> = {}): CapturedIo {
  const io: CapturedIo = {
    out: '',
    err: '',
    stdout: (text: string) => {
      io.out += text;
    },
    stderr: (text: string) => {
      io.err += text;
    },
    stdin: async () => new TextEncoder().encode(stdin),
    ...extra,
  };
  return io;
}

/**
 * A terminal where the person types `answer` (to a confirmation).
 * @example
 * const io = terminal('y');
 */
export function terminal(answer: string): CapturedIo {
  return capture('', {
    interactive: true,
    async *lines() {
      yield answer;
    },
  });
}
