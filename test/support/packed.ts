// The package as users install it: built once per run, packed with `npm pack`, unpacked into scratch projects whose
// other dependencies are links into this repository's node_modules (the machine has no registry to install from).
import { execFile } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { inject } from 'vitest';

const run = promisify(execFile);

/** The repository root. */
export const root: string = fileURLToPath(new URL('../../', import.meta.url));

/** What `npm pack` made: the tarball and the paths it holds (relative to the package root). */
export interface Packed {
  readonly tarball: string;
  readonly files: readonly string[];
}

let packing: Promise<Packed> | undefined;

/**
 * Builds and packs the package once per run, shared by every test file: the first caller takes a lock in the run's
 * pack directory and does the work; the others (other files, other workers) wait for its result.
 * @example
 * const { files } = await packedPackage();
 */
export function packedPackage(): Promise<Packed> {
  packing ??= packOnce(inject('packDir'));
  return packing;
}

async function packOnce(dir: string): Promise<Packed> {
  const result = join(dir, 'packed.json');
  const failed = join(dir, 'failed.txt');
  let owner = false;
  try {
    mkdirSync(join(dir, 'lock'));
    owner = true;
  } catch {
    // Another test file is building: wait below for what it leaves.
  }
  if (owner) {
    try {
      await run('npm', ['run', 'build'], { cwd: root });
      const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: root });
      const [info] = JSON.parse(stdout) as [{ filename: string; files: { path: string }[] }];
      const packed: Packed = {
        tarball: join(dir, info.filename),
        files: info.files.map((file) => file.path),
      };
      writeFileSync(result, JSON.stringify(packed));
      return packed;
    } catch (error) {
      writeFileSync(failed, String(error));
      throw error;
    }
  }
  // A build and a pack take seconds; a generous bound, so a noisy machine never fails this for time.
  for (let waited = 0; waited < 600_000; waited += 200) {
    if (existsSync(result)) return JSON.parse(readFileSync(result, 'utf8')) as Packed;
    if (existsSync(failed)) throw new Error(`building the package failed: ${readFileSync(failed, 'utf8')}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('timed out waiting for the package to be built and packed');
}

/**
 * A new project directory with the packed package unpacked into its node_modules (as `npm install <tarball>` would
 * lay it out) and `links` (peers, @types, test tools) linked from this repository's node_modules.
 * @example
 * const dir = await scratchProject('readme', ['express', '@types/express', '@types/node']);
 */
export async function scratchProject(name: string, links: readonly string[]): Promise<string> {
  const { tarball } = await packedPackage();
  const dir = join(inject('packDir'), name);
  rmSync(dir, { recursive: true, force: true });
  const installed = join(dir, 'node_modules', 'workforce-webhooks');
  mkdirSync(installed, { recursive: true });
  await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
  const pkg = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  // The package's own dependencies, hoisted beside it as npm does, then what the project installs itself.
  for (const dependency of [...Object.keys(pkg.dependencies ?? {}), ...links]) {
    const target = join(dir, 'node_modules', dependency);
    if (existsSync(target)) continue;
    mkdirSync(dirname(target), { recursive: true });
    symlinkSync(realpathSync(join(root, 'node_modules', dependency)), target, 'dir');
  }
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: `scratch-${name}`, private: true, type: 'module' }, null, 2)}\n`,
  );
  return dir;
}
