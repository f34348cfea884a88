// The most the CLI reads of a body or its data (`sign`'s standard input, `--data-file`): a receiver's default limit.
import type { Readable } from 'node:stream';

/**
 * A receiver's default `maxBodyBytes` (1 MiB): a larger body is answered 413, so the CLI reads no more than this.
 * @example
 * const body = await readBounded(process.stdin, MAX_BODY_BYTES);
 */
export const MAX_BODY_BYTES: number = 1024 * 1024;

/**
 * The whole of `stream` as bytes, or undefined once it passes `limit` bytes (the stream is then destroyed, so a
 * writer that never stops, `yes | ...` or a device, is not read into memory); read errors reject as the stream's.
 * @example
 * const body = await readBounded(createReadStream(path), MAX_BODY_BYTES);
 */
export async function readBounded(stream: Readable, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += bytes.byteLength;
    // Leaving the loop ends the iteration, which destroys the stream.
    if (size > limit) return undefined;
    chunks.push(bytes);
  }
  return Buffer.concat(chunks);
}
