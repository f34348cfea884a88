// `--data` / `--data-file`: the event's data as a JSON object, or the sample of its type when neither is given.
import { createReadStream } from 'node:fs';
import { MAX_BODY_BYTES, readBounded } from './body-limit.js';
import { UsageError } from './io.js';

/**
 * Help lines of the data options, the same in `send` and `check`.
 * @example
 * `Options:\n${DATA_HELP}`
 */
export const DATA_HELP: string = `  --data         the event's data as a JSON object (default: a realistic sample of the type)
  --data-file    read the data from a JSON file instead (at most 1 MiB, a receiver's default body limit)`;

/**
 * The data from `--data` or `--data-file`, or undefined when neither was given (the caller then uses the sample).
 * @example
 * const data = await readData(values.data, values['data-file']);
 */
export async function readData(
  inline: string | undefined,
  file: string | undefined,
): Promise<Record<string, unknown> | undefined> {
  if (inline !== undefined && file !== undefined)
    throw new UsageError('give --data or --data-file, not both');
  if (inline === undefined && file === undefined) return undefined;
  const name = inline !== undefined ? '--data' : `--data-file ${file}`;
  const text = inline ?? (await readDataFile(file!, name));
  let data: unknown;
  try {
    // A byte order mark, which Windows editors and PowerShell put before a UTF-8 file's text, is no part of its JSON.
    data = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    throw new UsageError(`${name} is not JSON: it must be a JSON object`);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new UsageError(`${name} must be a JSON object`);
  return data as Record<string, unknown>;
}

/**
 * The file's text, read within a receiver's body limit: a large file, or a pipe or device that never ends, is not
 * read whole.
 */
async function readDataFile(file: string, name: string): Promise<string> {
  let bytes: Buffer | undefined;
  try {
    bytes = await readBounded(createReadStream(file), MAX_BODY_BYTES);
  } catch (error) {
    throw new UsageError(`cannot read ${name}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  if (bytes === undefined)
    throw new UsageError(
      `${name} is over 1 MiB: a delivery carrying it is over a receiver's default maxBodyBytes, answered 413`,
    );
  return bytes.toString('utf8');
}
