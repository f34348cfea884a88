// Run options shared by every section: `--quick` (or BENCH_QUICK=1) shortens every measurement.

/** True for the short run (`npm run bench -- --quick`). */
export const QUICK: boolean = process.env.BENCH_QUICK === '1' || process.argv.includes('--quick');

/**
 * The quick or the full value of a setting.
 * @example
 * const seconds = pick(3, 10);
 */
export function pick<T>(quick: T, full: T): T {
  return QUICK ? quick : full;
}
